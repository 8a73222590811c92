import { z } from 'zod';

/** Rate limiting's part of the gateway's environment (Redis itself: REDIS_URL). */
export const rateLimitConfigShape = {
  // Every counter key starts with this (tests use one per run); then the window and the key id.
  RATE_LIMIT_KEY_PREFIX: z.string().default('drael:rl:'),
};
