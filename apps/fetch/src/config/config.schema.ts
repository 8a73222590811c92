import { z } from 'zod';
import { baseEnvShape } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
});
export type FetchConfig = z.infer<typeof configSchema>;
export const FETCH_CONFIG = Symbol('FETCH_CONFIG');
