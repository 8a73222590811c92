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
