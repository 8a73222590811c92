import type { FetchErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/** A typed failure of this service; the gateway maps each code to an HTTP status. */
export class FetchError extends RpcError<FetchErrorCode> {}

export const fetchError = (code: FetchErrorCode, message: string, details?: Record<string, unknown>, retryable = false): FetchError =>
  new FetchError(code, message, retryable, details);
