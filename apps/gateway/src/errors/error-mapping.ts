import type { ErrorCode } from '@drael/contracts';

/** The OpenAI error `type` values Drael answers with. */
export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'api_error'
  | 'server_error'
  | 'timeout_error'
  | 'service_unavailable_error';

export interface HttpErrorShape {
  readonly status: number;
  readonly type: OpenAIErrorType;
}

/**
 * Every error code of every service, mapped to an HTTP status and OpenAI error type: the one
 * exhaustive switch of the architecture. A code added to any enum in packages/contracts without
 * a case here fails to compile (the `never` in the default branch).
 */
export function httpErrorOf(code: ErrorCode): HttpErrorShape {
  switch (code) {
    // common to every service
    case 'bad_request':
    case 'invalid_json':
    case 'invalid_request':
      return { status: 400, type: 'invalid_request_error' };
    case 'internal':
      return { status: 500, type: 'server_error' };
    case 'unavailable':
    case 'service_unavailable':
      return { status: 503, type: 'service_unavailable_error' };
    case 'timeout':
      return { status: 504, type: 'timeout_error' };
    // A request larger than a NATS message can carry: refused before it is sent, the limit stated.
    case 'payload_too_large':
      return { status: 413, type: 'invalid_request_error' };

    // gateway
    case 'model_not_found':
    case 'not_found':
      return { status: 404, type: 'not_found_error' };
    case 'upstream_unreachable':
      return { status: 502, type: 'api_error' };
    case 'upstream_timeout':
      return { status: 504, type: 'timeout_error' };
    case 'upstream_error':
      return { status: 502, type: 'api_error' };
    case 'upstream_rate_limited':
      return { status: 429, type: 'rate_limit_error' };
    case 'invalid_api_key':
    case 'missing_api_key':
      return { status: 401, type: 'authentication_error' };
    case 'rate_limit_exceeded':
    // One account's open run event streams on this replica are at their bound.
    case 'too_many_event_streams':
      return { status: 429, type: 'rate_limit_error' };

    // sandbox
    case 'code_too_large':
    case 'file_too_large':
      return { status: 413, type: 'invalid_request_error' };
    case 'invalid_timeout':
    case 'invalid_session':
    case 'invalid_path':
      return { status: 400, type: 'invalid_request_error' };
    case 'file_not_found':
      return { status: 404, type: 'not_found_error' };
    case 'quota_exceeded':
    case 'session_limit_reached':
      return { status: 429, type: 'insufficient_quota' };
    case 'sandbox_busy':
      return { status: 503, type: 'service_unavailable_error' };
    case 'runtime_unavailable':
      return { status: 503, type: 'service_unavailable_error' };

    // fetch
    case 'blocked_address':
      // spec 04: private, loopback and credential-bearing URLs are 400 bad_request.
      return { status: 400, type: 'invalid_request_error' };
    case 'unsupported_content_type':
      return { status: 415, type: 'invalid_request_error' };
    case 'too_many_redirects':
    case 'dns_failure':
    case 'connection_failed':
    case 'onion_unreachable':
      return { status: 502, type: 'api_error' };
    case 'body_too_large':
      return { status: 413, type: 'invalid_request_error' };
    case 'fetch_timeout':
      return { status: 504, type: 'timeout_error' };
    case 'browser_unavailable':
      return { status: 503, type: 'service_unavailable_error' };
    // The browser's share of this tenant (or the pool) is taken: 503 with Retry-After, as sandbox_busy.
    case 'fetch_busy':
      return { status: 503, type: 'service_unavailable_error' };

    // search
    case 'search_unavailable':
      // spec 04: 503 search_unavailable, type server_error.
      return { status: 503, type: 'server_error' };
    case 'onion_search_unavailable':
      return { status: 503, type: 'service_unavailable_error' };

    // billing
    // A caller's own key always names a live account (a bad key is invalid_api_key, 401); these
    // two come from the admin API naming an account or key that is not there (or not that account's).
    case 'account_not_found':
    case 'key_not_found':
    case 'plan_not_found':
      return { status: 404, type: 'not_found_error' };
    case 'plan_required':
      return { status: 403, type: 'permission_error' };
    case 'weekly_allowance_reached':
    case 'daily_ceiling_reached':
      return { status: 429, type: 'insufficient_quota' };
    case 'hold_not_found':
      return { status: 404, type: 'not_found_error' };
    case 'hold_already_resolved':
    case 'idempotency_conflict':
    // The same Idempotency-Key with another request (Stripe's semantics): nothing was done.
    case 'idempotency_key_reused':
      return { status: 409, type: 'invalid_request_error' };
    // agent steps' money (spec 03): the account's balance or monthly budget cannot pay, or its step rate is used up
    case 'insufficient_balance':
    case 'monthly_budget_reached':
      return { status: 429, type: 'insufficient_quota' };
    case 'agent_rate_limited':
      return { status: 429, type: 'rate_limit_error' };
    // A receipt that would not extend the run's chain as billing issued it: a platform fault, never the caller's.
    case 'receipt_chain_mismatch':
      return { status: 500, type: 'server_error' };

    // agent-run
    case 'agent_not_found':
    case 'run_not_found':
      return { status: 404, type: 'not_found_error' };
    case 'invalid_task':
      return { status: 400, type: 'invalid_request_error' };
    // spec 04: the key's tool level does not allow a tool of the agent.
    case 'tool_not_allowed':
      return { status: 403, type: 'permission_error' };
    case 'run_already_finished':
      return { status: 409, type: 'invalid_request_error' };
    // The account's queue of runs is full: nothing was queued; retry when some have started.
    case 'too_many_queued_runs':
      return { status: 429, type: 'rate_limit_error' };

    default:
      return unmapped(code);
  }
}

function unmapped(code: never): never {
  throw new Error(`error code ${String(code)} has no HTTP mapping`);
}
