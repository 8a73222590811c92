import { z } from 'zod';
import { baseEnvShape, envInt } from '@drael/config';

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v && v.trim().length > 0 ? v.trim() : undefined));

export const configSchema = z.object({
  ...baseEnvShape,
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Namespace for this service's cache keys (tests give each run its own). */
  FETCH_CACHE_PREFIX: z.string().default('drael:fetch:'),
  /** Tor's SOCKS5 port; .onion addresses go there (socks5h). Empty: .onion answers onion_unreachable. */
  TOR_SOCKS_URL: optionalString.default('socks5h://127.0.0.1:9050'),
  CHROMIUM_PATH: z.string().default('/usr/lib/chromium/chromium'),
  /** Pages rendered at once by the browser path; more wait in line. */
  FETCH_BROWSER_CONCURRENCY: envInt(1, 16).default(2),
  /** Renders waiting for a page; beyond it a render is refused with the retryable fetch_busy. */
  FETCH_BROWSER_MAX_QUEUE: envInt(0, 1_000).default(16),
  /**
   * One tenant's share of those (issue F8, as the sandbox's: one tenant's burst of renders took
   * every page and the whole queue). Unset: half the pages and a quarter of the queue, at least 1
   * each (packages/fair-slots, tenantShareOf); a request without a tenant counts as one tenant. A
   * single-tenant installation sets them to FETCH_BROWSER_CONCURRENCY and FETCH_BROWSER_MAX_QUEUE.
   */
  FETCH_BROWSER_CONCURRENCY_PER_TENANT: envInt(1, 16).optional(),
  FETCH_BROWSER_MAX_QUEUE_PER_TENANT: envInt(1, 1_000).optional(),
  /** Fresh browser contexts kept ready, so a request never waits for one to be made. */
  FETCH_BROWSER_SPARE: envInt(0, 8).default(1),
  /**
   * The most memory (MiB) a page may make Chromium hold while it renders, in its renderer or stored
   * in the browser process: past it the page is refused body_too_large (browser/browser-memory.ts).
   * A page's script otherwise takes gigabytes within the render's time. Real pages stay well under
   * it; the fetch pod's memory limit must hold FETCH_BROWSER_CONCURRENCY renderers at it beside the
   * browser process and the service.
   */
  FETCH_RENDERER_MAX_MB: envInt(64, 16_384).default(1024),
  /** Off: render: browser and auto's browser fallback answer browser_unavailable. */
  FETCH_BROWSER: z.enum(['on', 'off']).default('on'),
  /**
   * Pages' HTML is read (parsed, its content found, made markdown) on worker threads, never on the
   * event loop, and so is the rest of the work a page decides: a body that is not HTML formatted, a focus
   * found, an unlabelled body's encoding told (extract/extraction-pool.ts): at most this many at
   * once; more wait in line.
   */
  FETCH_EXTRACT_THREADS: envInt(1, 16).default(2),
  /** Pages waiting for a thread; beyond it a fetch is refused with the retryable fetch_busy. */
  FETCH_EXTRACT_MAX_QUEUE: envInt(0, 1_000).default(32),
  /** One tenant's share of those; unset: half the threads and a quarter of the queue (as the browser's). */
  FETCH_EXTRACT_THREADS_PER_TENANT: envInt(1, 16).optional(),
  FETCH_EXTRACT_MAX_QUEUE_PER_TENANT: envInt(1, 1_000).optional(),
  /**
   * How long one task (reading a page, ...) may take (and wait for a thread): past it the thread is ended and
   * the fetch answers fetch_timeout. A 3 MB page, the most the HTTP path reads, takes under 2 s
   * on a slow core; a hostile one (thousands of nested elements) would take minutes.
   */
  FETCH_EXTRACT_TIMEOUT_MS: envInt(100, 60_000).default(5_000),
  /**
   * TEST ONLY. Comma-separated CIDRs the SSRF guard lets through although they are loopback or
   * private (e.g. 127.0.0.2/32 for extraction fixtures). Never set in production.
   */
  FETCH_TEST_ALLOW_CIDRS: optionalString,
});
export type FetchConfig = z.infer<typeof configSchema>;
export const FETCH_CONFIG = Symbol('FETCH_CONFIG');
