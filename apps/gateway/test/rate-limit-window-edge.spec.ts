import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { testPrefix } from '@drael/test-support';
import type { GatewayConfig } from '../src/config/config.schema.js';
import { RateLimiter } from '../src/rate-limit/rate-limiter.service.js';

// A take from Redis in the last millisecond of a window: Redis expires a key only once its
// millisecond has passed, so the script counts the take in the old window and reports 0 ms left of
// it. The limiter read that as a lease already stale and answered no decision at all, which the
// gateway's admission turned into a 500 (one request in 5,000-40,000 under bench load, at a window's
// end). Here the window's end is made to fall on the take: each key's counter of the window under
// test is created to expire 1 ms later, then the key's first request is counted. The machine's
// Redis, keys of their own.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `${testPrefix('rl-edge')}:`;
const config = {
  REDIS_URL,
  RATE_LIMIT_REDIS_TIMEOUT_MS: 2_000,
  RATE_LIMIT_ON_REDIS_DOWN: 'fail_closed',
  RATE_LIMIT_KEY_PREFIX: prefix,
  RATE_LIMIT_LEASE_FRACTION: 0.01,
  AUTH_CACHE_MAX_KEYS: 10_000,
} as unknown as GatewayConfig;
const limiter = new RateLimiter(config);
const redis = new Redis(REDIS_URL);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  limiter.onApplicationShutdown();
  redis.disconnect();
});

// Each window in turn is the one that ends; the other is wide, so the decision reports the ending one.
const cases = [
  { window: 'minute', limits: { per_minute: 1_000, per_hour: 100_000 } },
  { window: 'hour', limits: { per_minute: 100_000, per_hour: 1_000 } },
] as const;

describe.each(cases)('rate limits at the end of a $window window', ({ window, limits }) => {
  it('counts a request taken in the window’s last millisecond (a decision, allowed), and the next one in a new window', async () => {
    // fail_closed: a Redis that did not answer would refuse (503), never pass as a decision here.
    let lastMillisecond = 0;
    let edgeKey: string | undefined;
    for (let i = 0; i < 5_000 && lastMillisecond < 20; i++) {
      const key = `${window}-${i}`;
      await redis.set(`${prefix}${window}:${key}`, 5, 'PX', 1);
      const decision = await limiter.consume(key, limits);
      expect(decision, `request ${i}`).toMatchObject({ allowed: true, limit: 1_000, window });
      // 1 ms or less of the window left: the take came in its last millisecond (or the one before).
      if (decision.resetMs <= 1) {
        lastMillisecond++;
        edgeKey = key;
      }
    }
    // The case under test happened (Redis counts time in milliseconds, so it comes every few tries).
    expect(lastMillisecond).toBeGreaterThan(0);

    // That key's lease ended with its window: its next request takes from a new one.
    await new Promise((r) => setTimeout(r, 5));
    const next = await limiter.consume(edgeKey!, limits);
    expect(next).toMatchObject({ allowed: true, window });
    expect(next.resetMs).toBeGreaterThan(50_000);
    expect(next.remaining).toBe(1_000 - 1);
  });
});
