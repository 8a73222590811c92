import { z } from 'zod';
import { DEFAULT_SEARCH_LIMIT, FreshnessSchema, MAX_SEARCH_LIMIT, MAX_SEARCH_QUERY_CHARS, SearchIntentSchema } from '@drael/contracts';

/** POST /v1/tools/search (spec 04). */
export const SearchToolRequestSchema = z.object({
  query: z.string().trim().min(1).max(MAX_SEARCH_QUERY_CHARS),
  // spec 01: honoured up to 20, 10 by default.
  max_results: z.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
  freshness: FreshnessSchema.optional(),
  onion: z.boolean().optional(),
});
export type SearchToolRequest = z.infer<typeof SearchToolRequestSchema>;

export const SearchToolResponseSchema = z.object({
  results: z.array(
    z.object({
      title: z.string(),
      url: z.string(),
      snippet: z.string(),
      source: z.string(),
      verified: z.boolean(),
      page_age: z.string().nullable(),
    }),
  ),
  provider: z.literal('drael'),
  /** false: every engine answered and none had anything (not an error); `note` says so. */
  found: z.boolean(),
  note: z.string().optional(),
  took_ms: z.number(),
  cached: z.boolean(),
  coverage: z.number(),
  sources_tried: z.array(z.string()),
  degraded: z.array(z.string()),
  intent: SearchIntentSchema,
});
export type SearchToolResponse = z.infer<typeof SearchToolResponseSchema>;
