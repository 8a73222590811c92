import { describe, expect, it } from 'vitest';
import { openAiDuration, RATE_LIMIT_HEADER_NAMES, rateLimitHeadersOf } from './rate-limit-headers.js';

describe('openAiDuration', () => {
  it('formats like OpenAI reset headers', () => {
    expect(openAiDuration(1)).toBe('1s');
    expect(openAiDuration(59_001)).toBe('1m0s');
    expect(openAiDuration(360_000)).toBe('6m0s');
    expect(openAiDuration(3_723_000)).toBe('1h2m3s');
  });
});

describe('RATE_LIMIT_HEADER_NAMES', () => {
  it('names every header a decision writes, Retry-After of a refusal included (CORS exposes exactly these)', () => {
    const refused = rateLimitHeadersOf({ allowed: false, limit: 60, remaining: 0, resetMs: 30_000, window: 'minute', retryAfterS: 30 });
    expect(
      Object.keys(refused)
        .map((name) => name.toLowerCase())
        .sort(),
    ).toEqual([...RATE_LIMIT_HEADER_NAMES].sort());
  });
});
