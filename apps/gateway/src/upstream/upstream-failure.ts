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
 * upstream: a line that never ends, tokens that never stop) is cut there and fails typed. The
 * proxy's answers are not read but relayed, and are not bounded here.
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

/** A transport failure before the answer's headers, or undefined for anything else (an abort, a bug). */
export function transportFailure(err: unknown, deployment: string): AttemptFailure | undefined {
  const error = upstreamFailure(err, deployment);
  if (!error) return undefined;
  return { kind: error.code === 'upstream_timeout' ? 'timeout' : error.code === 'upstream_error' ? 'server_error' : 'connect', error };
}

/**
 * An upstream 4xx/5xx as the client-facing error: same status, its OpenAI envelope kept when it
 * sent one, wrapped in one otherwise. A 429 becomes `upstream_rate_limited` with its Retry-After
 * kept (issue 15), so a client tells it from its own key's `rate_limit_exceeded`.
 */
export function statusFailure(status: number, headers: IncomingHttpHeaders, text: string, now = Date.now()): AttemptFailure {
  const fallbackType = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const e = (parsed as { error?: { message?: unknown; type?: unknown; param?: unknown; code?: unknown } } | undefined)?.error;
  let error: ApiError;
  if (e && typeof e === 'object') {
    error = new ApiError(
      typeof e.code === 'string' ? e.code : 'upstream_error',
      typeof e.message === 'string' ? e.message : `The model upstream answered ${status}`,
      typeof e.param === 'string' ? e.param : null,
      // A 5xx is never the caller's invalid request, whatever type the upstream put on it.
      { status, type: typeof e.type === 'string' && status < 500 ? e.type : fallbackType },
    );
  } else {
    const detail = text.trim().slice(0, 500);
    error = new ApiError('upstream_error', `The model upstream answered ${status}${detail ? `: ${detail}` : ''}`, null, { status, type: fallbackType });
  }
  if (status === 429) {
    const limited = new ApiError('upstream_rate_limited', error.message, error.param, { status: 429, type: 'rate_limit_error' });
    const raw = headerOf(headers, 'retry-after');
    const retryAfterMs = parseRetryAfter(raw, now);
    if (raw !== undefined && retryAfterMs !== undefined) limited.headers = { 'retry-after': raw };
    return { kind: 'rate_limited', error: limited, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (status >= 500) return { kind: 'server_error', error };
  if (error.code === 'context_length_exceeded' || (status === 400 && /maximum context length|context window/i.test(error.message))) {
    return { kind: 'context_length', error };
  }
  return { kind: 'client_error', error };
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
