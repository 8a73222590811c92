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
 * Sets the rate-limit headers on the raw response: they then leave with whatever writes the head,
 * a normal reply, an error envelope or a stream (which writes its head itself, before the first
 * byte). X-RateLimit-Reset is seconds until the window resets.
 */
export function setRateLimitHeaders(res: ServerResponse, d: RateDecision): void {
  const resetS = Math.max(1, Math.ceil(d.resetMs / 1000));
  res.setHeader('X-RateLimit-Limit', String(d.limit));
  res.setHeader('X-RateLimit-Remaining', String(d.remaining));
  res.setHeader('X-RateLimit-Reset', String(resetS));
  res.setHeader('x-ratelimit-limit-requests', String(d.limit));
  res.setHeader('x-ratelimit-remaining-requests', String(d.remaining));
  res.setHeader('x-ratelimit-reset-requests', openAiDuration(d.resetMs));
  if (!d.allowed) res.setHeader('Retry-After', String(d.retryAfterS));
}
