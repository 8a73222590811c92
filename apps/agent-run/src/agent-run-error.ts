import type { AgentRunErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/** A typed failure agent-run answers with; the gateway maps each code to HTTP. */
export class AgentRunError extends RpcError<AgentRunErrorCode> {
  constructor(code: AgentRunErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, false, details);
  }
}
