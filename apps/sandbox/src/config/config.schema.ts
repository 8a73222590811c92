import { z } from 'zod';
import { baseEnvShape } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
});
export type SandboxConfig = z.infer<typeof configSchema>;
export const SANDBOX_CONFIG = Symbol('SANDBOX_CONFIG');
