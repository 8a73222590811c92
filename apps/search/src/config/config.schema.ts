import { z } from 'zod';
import { baseEnvShape, envBoolean, envInt, envList } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
  /** The SearXNG (or Debian searx) instance; its JSON format must be enabled. */
  SEARXNG_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8890'),
  /** How long one SearXNG call may take before the search counts as unreachable. */
  SEARXNG_TIMEOUT_MS: envInt(500, 60_000).default(10_000),
  /** Hidden-service engines asked for onion: true, by SearXNG engine name. Empty: onion search is refused. */
  SEARCH_ONION_ENGINES: envList(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  /** Every cache key starts with this (tests use one per run). */
  SEARCH_CACHE_PREFIX: z.string().default('drael:search:'),
  // spec 04: searches are cached for 10 minutes.
  SEARCH_CACHE_TTL_S: envInt(0, 86_400).default(600),
  /** Snippet verification through the fetch service (fetch.page.v1). */
  SEARCH_VERIFY: envBoolean.default(true),
  /** Total time verification may add to one search; what is not verified by then stays unverified. */
  SEARCH_VERIFY_BUDGET_MS: envInt(100, 30_000).default(4_000),
  /** Pages fetched at once for one search. */
  SEARCH_VERIFY_CONCURRENCY: envInt(1, 16).default(4),
  /** Pages fetched at once by this process for all searches together. */
  SEARCH_VERIFY_MAX_IN_FLIGHT: envInt(1, 256).default(16),
});
export type SearchConfig = z.infer<typeof configSchema>;
export const SEARCH_CONFIG = Symbol('SEARCH_CONFIG');
