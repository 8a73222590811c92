import { z } from 'zod';
import { COMMON_ERROR_CODES } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';

export const FETCH_ERROR_CODES = [
  ...COMMON_ERROR_CODES,
  'blocked_address',
  'upstream_error',
  'unsupported_content_type',
  'too_many_redirects',
  'body_too_large',
  'fetch_timeout',
  'dns_failure',
  'connection_failed',
  'onion_unreachable',
  'browser_unavailable',
  // The browser's pages are all taken and the caller's share of the queue (or the queue) is full,
  // or no page came free while the request still waited: the page was not loaded; retry.
  'fetch_busy',
] as const;
export type FetchErrorCode = (typeof FETCH_ERROR_CODES)[number];

// spec 02: the web_fetch tool bounds a returned page at 1 MiB; the service never returns more.
export const MAX_PAGE_BYTES = 1_048_576;
// spec 04: fetches are cached for 15 minutes.
export const FETCH_CACHE_TTL_SECONDS = 15 * 60;

export const RenderModeSchema = z.enum(['auto', 'http', 'browser']);

export const FetchPageRequestSchema = z.object({
  url: z.string().min(1).max(8192),
  max_chars: z.number().int().positive().max(MAX_PAGE_BYTES).optional(),
  focus: z.string().max(1000).optional(),
  /** Characters of the (focused) text to skip: a later window of a long page, from a reply's `next_offset`. */
  offset: z.number().int().nonnegative().max(1_000_000_000).optional(),
  render: RenderModeSchema.optional(),
  tenant: z.string().max(128).optional(),
});
export const FetchPageReplySchema = z.object({
  url: z.string(),
  final_url: z.string(),
  title: z.string().nullable(),
  byline: z.string().nullable(),
  description: z.string().nullable(),
  canonical: z.string().nullable(),
  lang: z.string().nullable(),
  content_type: z.string(),
  content: z.string(),
  /** Characters in `content`. */
  chars: z.number().int().nonnegative(),
  /** Characters in the whole (focused) text `content` is a window of; absent from a service older than windows. */
  total_chars: z.number().int().nonnegative().optional(),
  /** Where the next window begins (pass it as `offset`), when the text goes on past `content`. */
  next_offset: z.number().int().nonnegative().optional(),
  truncated: z.boolean(),
  took_ms: z.number().nonnegative(),
  cached: z.boolean(),
});
/** Body of POST /v1/tools/fetch (spec 04). The render mode stays the service's own choice (auto). */
export const FetchToolHttpRequestSchema = z
  .object({
    url: z.string().min(1).max(8192),
    max_chars: z.number().int().positive().max(MAX_PAGE_BYTES).optional(),
    focus: z.string().max(1000).optional(),
    offset: FetchPageRequestSchema.shape.offset,
  })
  .strict();
export type FetchToolHttpRequest = z.infer<typeof FetchToolHttpRequestSchema>;

export type FetchPageRequest = z.infer<typeof FetchPageRequestSchema>;
export type FetchPageReply = z.infer<typeof FetchPageReplySchema>;

export const fetchCatalog = {
  health: healthEntry('fetch'),
  page: defineEntry({
    subject: 'fetch.page.v1',
    service: 'fetch',
    request: FetchPageRequestSchema,
    reply: FetchPageReplySchema,
    errors: FETCH_ERROR_CODES,
    timeoutMs: 30_000,
    // A read of a public page (GET): sent again once if the replica fetching it dies.
    idempotent: true,
  }),
} as const;
