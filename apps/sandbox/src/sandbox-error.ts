import type { SandboxErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/**
 * A typed failure of this service: its code is one of the sandbox's declared codes (a code the
 * catalog does not list fails to compile here, and the handler decorator answers `internal` for it).
 */
export class SandboxError extends RpcError<SandboxErrorCode> {}
