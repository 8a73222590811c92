import { z } from 'zod';
import { COMMON_ERROR_CODES } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';

export const SEARCH_ERROR_CODES = [...COMMON_ERROR_CODES, 'search_unavailable', 'onion_search_unavailable'] as const;
export type SearchErrorCode = (typeof SEARCH_ERROR_CODES)[number];

// spec 01: limit is honoured up to 20 and defaults to 10.
export const MAX_SEARCH_LIMIT = 20;
export const DEFAULT_SEARCH_LIMIT = 10;

export const FreshnessSchema = z.enum(['day', 'week', 'month', 'year']);

export const SearchQueryRequestSchema = z.object({
  query: z.string().trim().min(1).max(2000),
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  onion: z.boolean().optional(),
  freshness: FreshnessSchema.optional(),
  language: z.string().max(16).optional(),
});
export const SearchResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  snippet: z.string(),
  source: z.string(),
  engines: z.array(z.string()),
  published_at: z.string().nullable(),
});
export const SearchQueryReplySchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    found: z.boolean(),
    note: z.string().optional(),
    results: z.array(SearchResultSchema),
    degraded: z.array(z.string()),
    coverage: z.number().min(0).max(1),
    sources_tried: z.array(z.string()),
    took_ms: z.number().nonnegative(),
    cached: z.boolean(),
  }),
  z.object({ ok: z.literal(false), reason: z.string(), degraded: z.array(z.string()), took_ms: z.number().nonnegative() }),
]);
export type SearchQueryRequest = z.infer<typeof SearchQueryRequestSchema>;
export type SearchQueryReply = z.infer<typeof SearchQueryReplySchema>;
export type SearchResult = z.infer<typeof SearchResultSchema>;

export const searchCatalog = {
  health: healthEntry('search'),
  query: defineEntry({
    subject: 'search.query.v1',
    service: 'search',
    request: SearchQueryRequestSchema,
    reply: SearchQueryReplySchema,
    errors: SEARCH_ERROR_CODES,
    timeoutMs: 15_000,
  }),
} as const;
