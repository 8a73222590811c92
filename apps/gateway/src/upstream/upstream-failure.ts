import type { IncomingHttpHeaders } from 'node:http';
import { errors as undiciErrors } from 'undici';
import { UPSTREAM_FAILURE_CODES, type UpstreamFailureCode } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import type { FailureKind } from './deployment.js';

/** One failed attempt on one deployment: what the client would see, and what the router learns. */
export interface AttemptFailure {
  readonly kind: FailureKind;
  readonly error: ApiError;
  /** A 429's Retry-After, in ms. */
  readonly retryAfterMs?: number;
  /** The upstream's own message, for the operator's log only (never a refused credential's). */
  readonly detail?: string;
}

/** Kinds a request may be retried on another deployment for (before any byte reached the client). */
export function isRetryable(kind: FailureKind): boolean {
  return kind === 'connect' || kind === 'timeout' || kind === 'rate_limited' || kind === 'server_error';
}

/** Maps an undici/transport failure to the client-facing error, or undefined if it is not one. */
export function upstreamFailure(err: unknown, origin = 'the upstream'): ApiError | undefined {
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new ApiError('upstream_timeout', `The model upstream did not answer in time (${origin})`);
  }
  if (err instanceof undiciErrors.RequestAbortedError || (err as { name?: string }).name === 'AbortError') return undefined;
  const code = (err as { code?: string }).code ?? '';
  if (
    err instanceof undiciErrors.SocketError ||
    err instanceof undiciErrors.ConnectTimeoutError ||
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)
  ) {
    return new ApiError('upstream_unreachable', `The model upstream could not be reached (${origin}): ${code || (err as Error).message}`);
  }
  // The upstream broke HTTP itself (headers over undici's limit, a body unlike its Content-Length,
  // bytes that do not parse as HTTP): its failure, never the gateway's 500.
  if (
    err instanceof undiciErrors.HeadersOverflowError ||
    err instanceof undiciErrors.HTTPParserError ||
    err instanceof undiciErrors.ResponseContentLengthMismatchError ||
    err instanceof undiciErrors.ResponseExceededMaxSizeError ||
    err instanceof undiciErrors.InformationalError
  ) {
    return new ApiError('upstream_error', `The model upstream sent a malformed HTTP answer (${origin}): ${code || (err as Error).message}`);
  }
  return undefined;
}

/**
 * The most of one model answer the gateway reads and keeps (a turn the loops parse, a whole
 * answer): far above any real answer (128k output tokens stream as ~25 MiB of SSE), far below
 * what would take a replica's memory. An answer that goes on past it (a broken or hostile
 * upstream: a line that never ends, tokens that never stop) is cut there and fails typed. A
 * proxied stream is relayed, never kept, and is not bounded here; a proxied whole answer is
 * (chat-proxy.service.ts).
 */
export const MAX_MODEL_ANSWER_BYTES = 64 * 1024 * 1024;

export function answerTooLarge(): ApiError {
  return new ApiError('upstream_error', `The model upstream's answer went over ${MAX_MODEL_ANSWER_BYTES / (1024 * 1024)} MiB; it was cut off`);
}

/**
 * An accepted answer that broke off (a stream or a body cut, a timeout between chunks): the one
 * error every reader of an answer reports (both loops' stream reader, the proxy), by its transport
 * kind when it has one.
 */
export function answerFailure(err: unknown, origin = 'the upstream'): ApiError {
  return upstreamFailure(err, origin) ?? new ApiError('upstream_error', `The model upstream answer was cut off (${origin})`);
}

/**
 * An accepted whole answer not complete within its deadline from the head (the deployment's body
 * timeout): undici's body timeout is the silence between two chunks, which a trickle of
 * keep-alive bytes resets for ever. Every reader of a whole answer (UpstreamClient.read, the proxy).
 */
export function answerDeadlinePassed(ms: number, origin: string): ApiError {
  return new ApiError('upstream_timeout', `The model upstream did not finish its answer within ${Math.round(ms / 1000)} s (${origin})`);
}

/** A stream that sent no answer event for a body timeout, only keep-alive comments (both loops' reader, the proxy). */
export function answerStalled(ms: number, origin?: string): ApiError {
  return new ApiError('upstream_timeout', `The model upstream sent no answer for ${Math.round(ms / 1000)} s (only keep-alives${origin ? `; ${origin}` : ''})`);
}

/** A stream that ended cleanly but with neither a finish reason nor `[DONE]`: a cut, not an end. */
export function answerCutShort(): ApiError {
  return new ApiError('upstream_error', 'The model upstream answer ended before it finished (no finish reason, no [DONE])');
}

/** A 2xx head that is no model answer (the deployment's fault: 502 `upstream_error`, retried on another deployment). */
export function notAnAnswer(why: string, origin = 'the upstream'): AttemptFailure {
  return { kind: 'server_error', error: new ApiError('upstream_error', `The model upstream ${why} (${origin})`, null, { status: 502, type: 'api_error' }) };
}

/** A transport failure before the answer's headers, or undefined for anything else (an abort, a bug). */
export function transportFailure(err: unknown, deployment: string): AttemptFailure | undefined {
  const error = upstreamFailure(err, deployment);
  if (!error) return undefined;
  return { kind: error.code === 'upstream_timeout' ? 'timeout' : error.code === 'upstream_error' ? 'server_error' : 'connect', error };
}

/**
 * An upstream's refusal as the client-facing error. What the upstream says reaches the client only
 * when it is about the client's own request (a 400's "bad temperature", a context too long): then
 * the status and the OpenAI envelope pass through. Everything else is about the deployment, not
 * the caller, and is answered in Drael's words, never the upstream's (its text can carry the
 * deployment's key, an org id, internal hosts and paths): a refused credential (401, 403, 407) or
 * a model or path the upstream does not serve (404) is 502 `upstream_error`, retried on another
 * deployment, so a valid Drael key is never told it is invalid; a 5xx is 502 (503 stays 503, 504 is
 * `upstream_timeout`); a 429 is `upstream_rate_limited` with its Retry-After kept (issue 15), so a
 * client tells it from its own key's `rate_limit_exceeded`. `detail` keeps the upstream's own
 * message for the operator's log, except for a refused credential.
 */
export function statusFailure(status: number, headers: IncomingHttpHeaders, text: string, now = Date.now(), origin = 'the upstream'): AttemptFailure {
  const detail = CREDENTIAL_STATUSES.has(status) ? undefined : upstreamMessageOf(text);
  if (status === 429) {
    const limited = new ApiError('upstream_rate_limited', `The model upstream is rate limiting requests (${origin}); retry later`, null, { status: 429, type: 'rate_limit_error' });
    const raw = headerOf(headers, 'retry-after');
    const retryAfterMs = parseRetryAfter(raw, now);
    if (raw !== undefined && retryAfterMs !== undefined) limited.headers = { 'retry-after': raw };
    return { kind: 'rate_limited', error: limited, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), ...(detail ? { detail } : {}) };
  }
  if (status >= 500 || status === 408) {
    const timedOut = status === 504 || status === 408;
    const error = timedOut
      ? new ApiError('upstream_timeout', `The model upstream did not answer in time (${origin}: ${status})`)
      : new ApiError('upstream_error', `The model upstream failed (${origin}: ${status})`, null, { status: status === 503 ? 503 : 502, type: 'api_error' });
    return { kind: timedOut ? 'timeout' : 'server_error', error, ...(detail ? { detail } : {}) };
  }
  if (CREDENTIAL_STATUSES.has(status) || status === 404) {
    const what = status === 404 ? "does not serve this deployment's model or path" : "refused this deployment's credentials";
    const error = new ApiError('upstream_error', `The model upstream ${what} (${origin}: ${status}); the operator must correct the deployment`, null, {
      status: 502,
      type: 'api_error',
    });
    return { kind: 'server_error', error, ...(detail ? { detail } : {}) };
  }
  // The client's own request (400, 409, 413, 422, ...): the upstream's envelope as it sent it.
  const e = envelopeOf(text);
  const error = e
    ? new ApiError(
        typeof e.code === 'string' ? e.code : 'upstream_error',
        typeof e.message === 'string' ? e.message : `The model upstream answered ${status}`,
        typeof e.param === 'string' ? e.param : null,
        { status, type: typeof e.type === 'string' ? e.type : 'invalid_request_error' },
      )
    : new ApiError('upstream_error', `The model upstream answered ${status}${detail ? `: ${detail}` : ''}`, null, { status, type: 'invalid_request_error' });
  if (error.code === 'context_length_exceeded' || (status === 400 && /maximum context length|context window/i.test(error.message))) {
    return { kind: 'context_length', error };
  }
  return { kind: 'client_error', error };
}

/**
 * An answer below 400 that is no model answer, or undefined for one that may be: a redirect (never
 * followed: a deployment's base_url is where its answers come from, and a redirect could point
 * anywhere, an internal address included), a body in a content coding the gateway did not ask for
 * (it sends no Accept-Encoding; relayed, a client would get bytes it cannot read under a JSON or
 * SSE type), or an HTML page (a proxy's or load balancer's error page served as 200). Each is the
 * deployment's fault: 502 `upstream_error`, retried on another deployment. Only the head is
 * looked at, so the proxy's answers stay unread.
 */
export function unacceptedAnswer(status: number, headers: IncomingHttpHeaders, origin = 'the upstream'): AttemptFailure | undefined {
  let why: string | undefined;
  if (status < 200 || status >= 300) why = `answered ${status} instead of an answer; redirects are not followed`;
  else {
    const coding = headerOf(headers, 'content-encoding')?.trim().toLowerCase();
    if (coding && coding !== 'identity') why = `sent its answer in a content coding that was not asked for (${coding.slice(0, 40)})`;
    else if (/^\s*text\/html\b/i.test(headerOf(headers, 'content-type') ?? '')) why = 'answered with an HTML page';
  }
  return why === undefined ? undefined : notAnAnswer(why, origin);
}

/** Statuses that say the deployment's credentials were refused: nothing of the answer is repeated, not even to the log. */
const CREDENTIAL_STATUSES: ReadonlySet<number> = new Set([401, 403, 407]);

function envelopeOf(text: string): { message?: unknown; type?: unknown; param?: unknown; code?: unknown } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const e = (parsed as { error?: unknown } | null)?.error;
  return e && typeof e === 'object' ? e : undefined;
}

/** The upstream's own words, at most 500 characters: its envelope's message, or the start of its body. */
function upstreamMessageOf(text: string): string | undefined {
  const message = envelopeOf(text)?.message;
  const words = (typeof message === 'string' ? message : text).trim().slice(0, 500);
  return words || undefined;
}

const DRAEL_UPSTREAM_CODES: ReadonlySet<string> = new Set(UPSTREAM_FAILURE_CODES);

/**
 * The Drael code of an upstream failure, from the fixed set UPSTREAM_FAILURE_CODES: the failures
 * built above keep theirs; an upstream's own code (its envelope's, passed through on HTTP by
 * statusFailure: `invalid_api_key`, `context_length_exceeded`, ...) is `upstream_error`, so that
 * it is never read as the caller's own failure (a deployment's bad key is not the caller's).
 */
export function upstreamFailureCode(error: ApiError): UpstreamFailureCode {
  return DRAEL_UPSTREAM_CODES.has(error.code) ? (error.code as UpstreamFailureCode) : 'upstream_error';
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 10.2.3), in ms from now; undefined if unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
