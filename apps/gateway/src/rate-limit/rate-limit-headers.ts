import type { ServerResponse } from 'node:http';
import type { RateDecision } from './rate-limiter.service.js';

/** OpenAI's duration format for x-ratelimit-reset-requests ("1s", "6m0s", "1h2m3s"). */
export function openAiDuration(ms: number): string {
  let s = Math.max(1, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

/**
 * The names putRateLimitHeaders writes (lower case), Retry-After included: what a browser page is
 * let read of an answer (http/cors.ts).
 */
export const RATE_LIMIT_HEADER_NAMES = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'retry-after',
] as const;

/**
 * The rate-limit headers of one decision, written into `head`: the hot chat completions route
 * hands that object to the one writeHead of its answer (six setHeader calls per request put
 * Node's writeHead on its slow merge path). X-RateLimit-Reset is seconds until the window resets.
 */
export function putRateLimitHeaders(head: Record<string, string>, d: RateDecision): void {
  const limit = String(d.limit);
  const remaining = String(d.remaining);
  head['X-RateLimit-Limit'] = limit;
  head['X-RateLimit-Remaining'] = remaining;
  head['X-RateLimit-Reset'] = String(Math.max(1, Math.ceil(d.resetMs / 1000)));
  head['x-ratelimit-limit-requests'] = limit;
  head['x-ratelimit-remaining-requests'] = remaining;
  head['x-ratelimit-reset-requests'] = openAiDuration(d.resetMs);
  if (!d.allowed) head['Retry-After'] = String(d.retryAfterS);
}

/**
 * Sets the rate-limit headers on the raw response: they then leave with whatever writes the head,
 * a normal reply, an error envelope or a stream (which writes its head itself, before the first
 * byte).
 */
export function setRateLimitHeaders(res: ServerResponse, d: RateDecision): void {
  const head = rateLimitHeadersOf(d);
  for (const name in head) res.setHeader(name, head[name]!);
}

export function rateLimitHeadersOf(d: RateDecision): Record<string, string> {
  const head: Record<string, string> = {};
  putRateLimitHeaders(head, d);
  return head;
}
