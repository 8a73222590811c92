import type { WireError } from '@drael/contracts';

/** A typed failure that crosses NATS intact: thrown by handlers, re-thrown by the client. */
export class RpcError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly retryable = false,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  toWire(): WireError {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details ? { details: this.details } : {}),
    };
  }

  static fromWire(wire: WireError): RpcError {
    return new RpcError(wire.code, wire.message, wire.retryable, wire.details);
  }
}

export function isRpcError(err: unknown): err is RpcError {
  return err instanceof RpcError;
}

/** The longest field path or message a bad_request quotes: both can hold the request's own text (an unknown key, a value). */
const MAX_QUOTED_CHARS = 200;

function clip(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}

/** A request its schema refused (zod's error): bad_request naming the first issue's field, in `details.param` too. */
export function badRequestOf(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): RpcError {
  const issue = error.issues[0];
  const param = clip(issue?.path.map(String).join('.') ?? '');
  return new RpcError('bad_request', `${param || 'payload'}: ${clip(issue?.message ?? 'invalid')}`, false, { param: param || null });
}
