import type { ErrorCode, OpenAIErrorEnvelope } from '@drael/contracts';
import { isRpcError } from '@drael/nats-rpc';
import { httpErrorOf } from './error-mapping.js';

/** The Retry-After of a 503, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/**
 * An error on its way to the client. Anything the gateway raises on purpose is one of these;
 * the exception filter renders it as the OpenAI envelope with the mapped status.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  /** Headers the error's answer carries (an upstream 429's Retry-After, x-drael-upstream). */
  headers?: Record<string, string>;

  constructor(
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly param: string | null = null,
    // Only for errors passed through from an upstream, which carry their own status and type.
    override?: { status: number; type: string },
  ) {
    super(message);
    this.name = 'ApiError';
    const mapped = override ?? httpErrorOf(code as ErrorCode);
    this.status = mapped.status;
    this.type = mapped.type;
    // Every 503 says when to come back (RFC 9110 10.2.3): what is away (a service restarting,
    // a database failing over) is usually back within seconds, and clients that honour it (the
    // OpenAI SDKs do) wait that long instead of their own backoff's guess.
    if (this.status === 503) this.headers = { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) };
  }

  toEnvelope(): OpenAIErrorEnvelope {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /** A typed NATS failure from a service, mapped through the one table. */
  static fromRpc(err: unknown): ApiError | undefined {
    if (!isRpcError(err)) return undefined;
    const param = typeof err.details?.param === 'string' ? err.details.param : null;
    try {
      return new ApiError(err.code, err.message, param);
    } catch {
      // A code from a newer service than this gateway knows: still an envelope, never a crash.
      return new ApiError('internal', `${err.code}: ${err.message}`);
    }
  }
}
