import { z } from 'zod';
import { envInt } from '@drael/config';

/**
 * What a request gets while Redis (the shared counters) cannot be reached (issue 19, item 4):
 * - `fail_open`: the same limits counted in each replica alone, so an account may get up to the
 *   limit times the number of gateway replicas until Redis is back.
 * - `fail_closed`: every request that needs a count is refused with 503 `service_unavailable`
 *   (retryable) until Redis is back: no request beyond the limit, no service either.
 * Either way the outage is logged when it starts and ends, and each request it decided is counted
 * in drael_gateway_rate_limit_redis_down_decisions_total{policy} (docs/operations.md; alert
 * DraelRateLimitRedisDown).
 */
export const REDIS_DOWN_POLICIES = ['fail_open', 'fail_closed'] as const;
export type RedisDownPolicy = (typeof REDIS_DOWN_POLICIES)[number];

/** Rate limiting's part of the gateway's environment (Redis itself: REDIS_URL). */
export const rateLimitConfigShape = {
  // Every counter key starts with this (tests use one per run); then the window and the key id.
  RATE_LIMIT_KEY_PREFIX: z.string().default('drael:rl:'),
  // A replica takes this share of a key's smaller limit from Redis per round trip (at least one
  // request): 0 means one round trip per request. It bounds what one replica's unused lease can
  // withhold from the others within a window.
  RATE_LIMIT_LEASE_FRACTION: z.coerce.number().min(0).max(0.1).default(0.01),
  // Redis down: count per replica (fail_open, the default: the API stays up) or refuse (fail_closed).
  RATE_LIMIT_ON_REDIS_DOWN: z.enum(REDIS_DOWN_POLICIES).default('fail_open'),
  // A count that Redis has not answered within this is taken as Redis down (a partition, not only a
  // refused connection, must not hold requests).
  RATE_LIMIT_REDIS_TIMEOUT_MS: envInt(10, 60_000).default(500),
};
