import { z } from 'zod';
import { envInt } from '@drael/config';

/** The Responses API's part of the gateway's environment (joined into the gateway's config schema). */
export const responsesConfigShape = {
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  /** Every stored-response key starts with this, then the account id (tests use one per run). */
  RESPONSES_KEY_PREFIX: z.string().default('drael:responses:'),
  /** How long a stored response can be read or continued (30 days, as OpenAI keeps them). */
  RESPONSES_TTL_S: envInt(60, 365 * 86_400).default(30 * 86_400),
  /** One stored response at most (its whole conversation: a continuation carries its history). */
  RESPONSES_MAX_BYTES: envInt(1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  /** One account's stored responses together at most (they share Redis with rate limits and queues). */
  RESPONSES_ACCOUNT_MAX_BYTES: envInt(1024, 1024 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
  /**
   * Every account's stored responses together at most, over every gateway replica (the count lives
   * in Redis): many accounts each under their own bound must not fill the Redis that rate limits,
   * the router and agent-run's queue need. Set it below that Redis's maxmemory less their share.
   */
  RESPONSES_TOTAL_MAX_BYTES: envInt(1024, 1024 * 1024 * 1024 * 1024).default(1024 * 1024 * 1024),
  /**
   * A store command (queued while the connection is being made, or sent) not answered within this
   * is taken as the store down: 503 `service_unavailable`, never a request held for the whole outage
   * (a frozen or partitioned Redis answers nothing). Room for one response at RESPONSES_MAX_BYTES.
   */
  RESPONSES_REDIS_TIMEOUT_MS: envInt(10, 60_000).default(1000),
};
export const ResponsesConfigSchema = z.object(responsesConfigShape);
export type ResponsesConfig = z.infer<typeof ResponsesConfigSchema>;
export const RESPONSES_CONFIG = Symbol('RESPONSES_CONFIG');
