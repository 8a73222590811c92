import { z } from 'zod';
import { baseEnvShape } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
});
export type SearchConfig = z.infer<typeof configSchema>;
export const SEARCH_CONFIG = Symbol('SEARCH_CONFIG');
