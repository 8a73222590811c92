import type { ServerResponse } from 'node:http';
import { metrics, statusClass } from '@drael/metrics';

/**
 * The gateway's series (docs/operations.md lists each with its labels and meaning). Every record
 * function here is called with one line at one spot; the label values are bounded at definition
 * (aliases, deployments, routes and tools come from configuration and are capped; the rest are
 * fixed lists). No key, account, session, URL or query is ever a label.
 */

export type GatewayMode = 'proxy' | 'catalogue' | 'responses' | 'none';
const MODES = ['proxy', 'catalogue', 'responses', 'none'] as const;
const MODE = Symbol('drael.mode');

const httpRequests = metrics.histogram({
  name: 'drael_gateway_http_request_duration_seconds',
  help: 'HTTP requests the gateway answered, by route pattern, method, status class and mode (its _count is the request count)',
  labels: {
    route: 80,
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
    status_class: ['1xx', '2xx', '3xx', '4xx', '5xx'],
    mode: MODES,
  },
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
});

/** Which mode served a response: set once the mode is known, read when its access line is written. */
export function markMode(res: ServerResponse, mode: GatewayMode): void {
  (res as unknown as Record<symbol, GatewayMode>)[MODE] = mode;
}

/** One HTTP request answered. `route` is the matched route pattern (never the URL as sent). */
export function recordHttpRequest(route: string, method: string, res: ServerResponse, ms: number): void {
  const mode = (res as unknown as Record<symbol, GatewayMode | undefined>)[MODE] ?? (route.startsWith('/v1/responses') ? 'responses' : 'none');
  httpRequests.observe({ route, method, status_class: statusClass(res.statusCode), mode }, ms / 1000);
}

const openStreams = metrics.gauge({ name: 'drael_gateway_open_streams', help: 'SSE streams open to clients, by mode', labels: { mode: MODES } });

/** A stream to the client opened on `res`; it counts as open until the response closes. */
export function trackOpenStream(res: ServerResponse, mode: GatewayMode): void {
  openStreams.inc({ mode });
  res.once('close', () => openStreams.dec({ mode }));
}

/**
 * The same count for an owner that already listens for its response's close (the proxy): one
 * listener less per streamed request. `streamClosed` must follow every `streamOpened`.
 */
export const streamOpened = (mode: GatewayMode) => openStreams.inc({ mode });
export const streamClosed = (mode: GatewayMode) => openStreams.dec({ mode });

const upstream = { alias: 100, deployment: 200 } as const;
const upstreamAttempts = metrics.counter({ name: 'drael_gateway_upstream_attempts_total', help: 'Attempts on a model deployment, by alias and deployment', labels: upstream });
const upstreamFailures = metrics.counter({
  name: 'drael_gateway_upstream_failures_total',
  help: 'Failed attempts on a model deployment, by alias, deployment and failure kind',
  labels: { ...upstream, kind: 30 },
});
const upstreamCooldowns = metrics.counter({
  name: 'drael_gateway_upstream_cooldowns_total',
  help: 'Times a deployment was taken out for a cooldown (by this replica), by alias and deployment',
  labels: upstream,
});
const upstreamFirstByte = metrics.histogram({
  name: 'drael_gateway_upstream_first_byte_seconds',
  help: "Time from sending an attempt to its accepted answer's head (first byte; a streaming upstream sends it with its first token), by alias and deployment",
  labels: upstream,
});
const upstreamDuration = metrics.histogram({
  name: 'drael_gateway_upstream_duration_seconds',
  help: 'Duration of an attempt on a model deployment until its answer ended or failed, by alias and deployment',
  labels: upstream,
});
const tokens = metrics.counter({
  name: 'drael_gateway_tokens_total',
  help: 'Model tokens reported by the upstream, by alias, deployment and direction (in: prompt, out: completion)',
  labels: { ...upstream, direction: ['in', 'out'] },
});
const cost = metrics.counter({
  name: 'drael_gateway_cost_usd_total',
  help: "Model spend in USD at the serving deployment's configured prices, by alias and deployment",
  labels: upstream,
});

export const upstreamMetrics = {
  attempt: (alias: string, deployment: string) => upstreamAttempts.inc({ alias, deployment }),
  failure: (alias: string, deployment: string, kind: string) => upstreamFailures.inc({ alias, deployment, kind }),
  cooldown: (alias: string, deployment: string) => upstreamCooldowns.inc({ alias, deployment }),
  firstByte: (alias: string, deployment: string, ms: number) => upstreamFirstByte.observe({ alias, deployment }, ms / 1000),
  ended: (alias: string, deployment: string, ms: number) => upstreamDuration.observe({ alias, deployment }, ms / 1000),
  usage(alias: string, deployment: string, usage: { prompt_tokens: number; completion_tokens: number }, prices: { input_per_1m: number; output_per_1m: number }): void {
    tokens.inc({ alias, deployment, direction: 'in' }, usage.prompt_tokens);
    tokens.inc({ alias, deployment, direction: 'out' }, usage.completion_tokens);
    cost.inc({ alias, deployment }, (usage.prompt_tokens * prices.input_per_1m + usage.completion_tokens * prices.output_per_1m) / 1_000_000);
  },
};

const turns = metrics.histogram({
  name: 'drael_gateway_turns_per_request',
  help: 'Model turns one catalogue or Responses request took (at most 6, spec 01)',
  labels: { mode: MODES },
  buckets: [1, 2, 3, 4, 5, 6],
});
/** A turn-loop request finished after `n` model turns. */
export const recordTurns = (mode: GatewayMode, n: number) => turns.observe({ mode }, n);

const toolCalls = metrics.histogram({
  name: 'drael_gateway_tool_call_duration_seconds',
  help: 'Server-side tool calls, by tool and outcome (ok, failed, refused), with their duration (its _count is the call count)',
  labels: { tool: 60, outcome: ['ok', 'failed', 'refused'] },
});
/** A tool result the model was refused with: the call named no tool it has, or its arguments were not JSON. */
const REFUSALS = new Set(['unknown_tool', 'invalid_arguments', 'spawn_refused']);

/**
 * Runs one tool call and records it: `ok`, `failed` (a result with ok:false or an error, or a
 * throw) or `refused` (it never ran). A name outside the catalogue counts as tool `unknown`: the
 * model writes that name, so it is not a label value.
 */
export async function measureToolCall<R extends Record<string, unknown> | string>(name: string, known: boolean, run: () => Promise<R>): Promise<R> {
  const done = toolCalls.time({ tool: known ? name : 'unknown' });
  let outcome: 'ok' | 'failed' | 'refused' = 'failed';
  try {
    const result = await run();
    // A tool that renders its own text (spawn_agent) answers a failure as a JSON error object.
    if (typeof result === 'string') {
      outcome = result.startsWith('{"error"') ? 'failed' : 'ok';
      return result;
    }
    const error = result.error;
    outcome = typeof error === 'string' && REFUSALS.has(error) ? 'refused' : result.ok === false || error !== undefined ? 'failed' : 'ok';
    return result;
  } finally {
    done({ outcome });
  }
}

const rateLimited = metrics.counter({ name: 'drael_gateway_rate_limit_refusals_total', help: 'Requests refused 429 by the per-key rate limit' });
export const recordRateLimitRefusal = () => rateLimited.inc({});

const redisDownDecisions = metrics.counter({
  name: 'drael_gateway_rate_limit_redis_down_decisions_total',
  help: 'Requests whose rate limit was decided without Redis (its shared counters unreachable), by RATE_LIMIT_ON_REDIS_DOWN policy: fail_open counted in this replica alone, fail_closed refused 503',
  labels: { policy: ['fail_open', 'fail_closed'] },
});
/** One request decided by the Redis-down policy (rate-limit.config.ts) instead of the shared counters. */
export const recordRateLimitRedisDown = (policy: 'fail_open' | 'fail_closed') => redisDownDecisions.inc({ policy });

const STORE_OPERATIONS = ['admit', 'save', 'load', 'delete'] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];
const responsesStoreFailures = metrics.counter({
  name: 'drael_gateway_responses_store_failures_total',
  help: 'Stored-response operations that failed because Redis did not answer (refused, or past RESPONSES_REDIS_TIMEOUT_MS), by operation; save: an answer that went out without being stored',
  labels: { operation: STORE_OPERATIONS },
});
/** One stored-response operation failed on Redis (responses/response.store.ts). */
export const recordResponsesStoreFailure = (operation: StoreOperation) => responsesStoreFailures.inc({ operation });

const STORE_SCOPES = ['account', 'installation'] as const;
export type StoreScope = (typeof STORE_SCOPES)[number];
const responsesStoreRefusals = metrics.counter({
  name: 'drael_gateway_responses_store_refusals_total',
  help: "Stored responses refused (429 quota_exceeded, before the model call or at save) because their bytes were past a bound: an account's (RESPONSES_ACCOUNT_MAX_BYTES) or every account's together (RESPONSES_TOTAL_MAX_BYTES)",
  labels: { scope: STORE_SCOPES },
});
/** One stored response refused past a bound on stored bytes (responses/response.store.ts). */
export const recordResponsesStoreRefusal = (scope: StoreScope) => responsesStoreRefusals.inc({ scope });

const spawned = metrics.counter({
  name: 'drael_gateway_spawned_agents_total',
  help: 'spawn_agent children, by outcome (ok, failed, ceiling: refused at the cost ceiling)',
  labels: { outcome: ['ok', 'failed', 'ceiling'] },
});
export const recordSpawnedAgent = (outcome: 'ok' | 'failed' | 'ceiling') => spawned.inc({ outcome });
