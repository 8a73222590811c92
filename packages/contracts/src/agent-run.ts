import { COMMON_ERROR_CODES } from './wire-error.js';
import { healthEntry } from './health.js';

export const AGENT_RUN_ERROR_CODES = [...COMMON_ERROR_CODES, 'agent_not_found', 'run_not_found', 'invalid_task'] as const;
export type AgentRunErrorCode = (typeof AGENT_RUN_ERROR_CODES)[number];

export const agentRunCatalog = {
  health: healthEntry('agent-run'),
} as const;
