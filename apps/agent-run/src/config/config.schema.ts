import { z } from 'zod';
import { baseEnvShape } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
});
export type AgentRunConfig = z.infer<typeof configSchema>;
export const AGENT_RUN_CONFIG = Symbol('AGENT_RUN_CONFIG');
