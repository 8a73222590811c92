import type { SearchErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';

/**
 * A typed failure of this service: its code is one of search's declared codes (a code the
 * catalog does not list fails to compile here, and the handler decorator answers `internal` for it).
 */
export class SearchError extends RpcError<SearchErrorCode> {}
