import type { gatewayCatalog } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/** The codes gateway.inference.chat.v1 declares (an unknown alias, the upstream failure set). */
type InferenceErrorCode = (typeof gatewayCatalog.inferenceChat.errors)[number];

/** A typed failure of gateway.inference.chat.v1: its code type refuses one the subject does not declare. */
export class InferenceError extends RpcError<InferenceErrorCode> {}
