import { z } from 'zod';
import { COMMON_ERROR_CODES, subjectErrors } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';

// search_unavailable: the gateway's answer on /v1/tools/search when the service fails or gives no
// result (the service itself answers such a search with `ok: false`, never with this code).
export const SEARCH_ERROR_CODES = [...COMMON_ERROR_CODES, 'search_unavailable', 'onion_search_unavailable'] as const;
export type SearchErrorCode = (typeof SEARCH_ERROR_CODES)[number];

// spec 01: limit is honoured up to 20 and defaults to 10 (more is a bad request, never a silent cut).
export const MAX_SEARCH_LIMIT = 20;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_QUERY_CHARS = 2000;

export const FreshnessSchema = z.enum(['day', 'week', 'month', 'year']);
export type Freshness = z.infer<typeof FreshnessSchema>;

/** What the query asks for, from a small rule-based classifier (apps/search README). */
export const SEARCH_INTENTS = ['currency', 'weather', 'time', 'definition', 'how_to', 'code', 'news', 'navigational', 'question', 'general'] as const;
export const SearchIntentSchema = z.enum(SEARCH_INTENTS);
export type SearchIntent = z.infer<typeof SearchIntentSchema>;

export const SearchQueryRequestSchema = z.object({
  query: z.string().trim().min(1).max(MAX_SEARCH_QUERY_CHARS),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  onion: z.boolean().optional(),
  freshness: FreshnessSchema.optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/)
    .optional(),
  /** Check each snippet on the live page (through fetch.page.v1) when the service has it enabled. */
  verify: z.boolean().optional(),
});
export const SearchResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  snippet: z.string(),
  /** The engine that found it (first of `engines`), one of the reply's `sources_tried`. */
  source: z.string(),
  engines: z.array(z.string()),
  /** The engine's published date, YYYY-MM-DD, when it gave one. */
  page_age: z.string().nullable(),
  /** True only when the snippet was found on the live page before this reply. */
  verified: z.boolean(),
});
export const SearchFailureCodeSchema = z.enum(['searx_unreachable', 'all_engines_failed', 'no_engines']);
export const SearchQueryReplySchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    /** false: every queried engine answered and none had results (not a failure). */
    found: z.boolean(),
    note: z.string().optional(),
    results: z.array(SearchResultSchema),
    /** Engines that were asked and failed (some answered, so this is still a result). */
    degraded: z.array(z.string()),
    /** Engines that answered / engines asked. */
    coverage: z.number().min(0).max(1),
    sources_tried: z.array(z.string()),
    intent: SearchIntentSchema,
    took_ms: z.number().nonnegative(),
    cached: z.boolean(),
    /**
     * How much longer the shared cache holds this answer, in ms; absent when it is not cached.
     * A caller may keep the answer that long and no longer (the gateway's memo of /v1/tools/search).
     */
    cache_ttl_ms: z.number().int().nonnegative().optional(),
    /**
     * How long SearXNG took to answer this search (request sent to body read), in ms; absent when
     * it was not asked (a cached answer). Lets a caller tell SearXNG's time from Drael's own
     * (the gateway's Server-Timing header on /v1/tools/search).
     */
    searx_ms: z.number().nonnegative().optional(),
  }),
  z.object({
    ok: z.literal(false),
    code: SearchFailureCodeSchema,
    reason: z.string(),
    degraded: z.array(z.string()),
    sources_tried: z.array(z.string()),
    took_ms: z.number().nonnegative(),
  }),
]);
export type SearchQueryRequest = z.infer<typeof SearchQueryRequestSchema>;
export type SearchQueryReply = z.infer<typeof SearchQueryReplySchema>;
export type SearchResult = z.infer<typeof SearchResultSchema>;
export type SearchFailureCode = z.infer<typeof SearchFailureCodeSchema>;

export const searchCatalog = {
  health: healthEntry('search'),
  query: defineEntry({
    subject: 'search.query.v1',
    service: 'search',
    request: SearchQueryRequestSchema,
    reply: SearchQueryReplySchema,
    errors: subjectErrors<SearchErrorCode>()('onion_search_unavailable'),
    timeoutMs: 15_000,
    // A query has no effect: sent again once if the replica answering it dies.
    idempotent: true,
  }),
} as const;
