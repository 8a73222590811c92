import { z } from 'zod';

/** Rate limiting's part of the gateway's environment (Redis itself: REDIS_URL). */
export const rateLimitConfigShape = {
  // Every counter key starts with this (tests use one per run); then the window and the key id.
  RATE_LIMIT_KEY_PREFIX: z.string().default('drael:rl:'),
  // A replica takes this share of a key's smaller limit from Redis per round trip (at least one
  // request): 0 means one round trip per request. It bounds what one replica's unused lease can
  // withhold from the others within a window.
  RATE_LIMIT_LEASE_FRACTION: z.coerce.number().min(0).max(0.1).default(0.01),
};
