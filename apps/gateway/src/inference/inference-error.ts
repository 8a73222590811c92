import { GATEWAY_ERROR_CODES, type GatewayErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/** A typed failure of gateway.inference.v1: its code is one the gateway's catalog declares. */
export class InferenceError extends RpcError<GatewayErrorCode> {}

const KNOWN_CODES: ReadonlySet<string> = new Set(GATEWAY_ERROR_CODES);

export function isGatewayErrorCode(code: string): code is GatewayErrorCode {
  return KNOWN_CODES.has(code);
}
