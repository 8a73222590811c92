import { metrics } from '@drael/metrics';
import { RpcError } from '@drael/nats-rpc';

/** The fetch service's series (docs/operations.md). */
const pages = metrics.histogram({
  name: 'drael_fetch_page_duration_seconds',
  help: 'Page loads, by path (http, browser, onion) and outcome (ok or the error code); its _count is the page count',
  labels: { path: ['http', 'browser', 'onion'], outcome: 30 },
});
const refusals = metrics.counter({
  name: 'drael_fetch_ssrf_refusals_total',
  help: 'Destinations refused as not public (SSRF guard), by reason: the address range or reserved name kind',
  labels: { reason: 40 },
});
const cache = metrics.counter({ name: 'drael_fetch_cache_lookups_total', help: 'Page cache lookups, by result (hit, miss)', labels: { result: ['hit', 'miss'] } });
const memoryStops = metrics.counter({
  name: 'drael_fetch_memory_stops_total',
  help: 'Times Chromium held more than FETCH_RENDERER_MAX_MB for pages rendering, by what was stopped (renderer: a renderer killed, its page refused body_too_large; storage: renders whose site stored the most, refused body_too_large; idle: the contexts kept for idle tenants closed; shared: every render in flight stopped, retryable)',
  labels: { where: ['renderer', 'storage', 'idle', 'shared'] },
});

/** Chromium held more than the bound for pages, and what was stopped (browser/browser-memory.ts, BrowserPool). */
export function recordMemoryStop(where: 'renderer' | 'storage' | 'idle' | 'shared'): void {
  memoryStops.inc({ where });
}

interface BrowserStats {
  active: number;
  spare: number;
  tenant: number;
  /** Renders waiting for a page, and the most that may wait (FETCH_BROWSER_MAX_QUEUE). */
  queued: number;
  queueMax: number;
}
/** The extraction threads' fair slots (extract/extraction-pool.ts). */
interface ExtractionStats {
  active: number;
  queued: number;
  queueMax: number;
}
const sources: { browser?: () => BrowserStats; extraction?: () => ExtractionStats } = {};
metrics.gauge({
  name: 'drael_fetch_browser_contexts',
  help: 'Chromium contexts open, by kind (spare: made ahead; tenant: kept for a tenant; active: pages rendering now)',
  labels: { kind: ['spare', 'tenant', 'active'] },
  collect: (set) => {
    const s = sources.browser?.();
    if (!s) return;
    set({ kind: 'spare' }, s.spare);
    set({ kind: 'tenant' }, s.tenant);
    set({ kind: 'active' }, s.active);
  },
});
// As the sandbox's run queue: a queue near its bound means renders are about to be refused fetch_busy.
metrics.gauge({
  name: 'drael_fetch_browser_queue_depth',
  help: 'Browser renders waiting for a page on this replica (past FETCH_BROWSER_MAX_QUEUE, or a tenant past its share, a render is refused fetch_busy)',
  collect: (set) => {
    const s = sources.browser?.();
    if (s) set({}, s.queued);
  },
});
metrics.gauge({
  name: 'drael_fetch_browser_queue_capacity',
  help: 'The most browser renders that may wait for a page on this replica (FETCH_BROWSER_MAX_QUEUE)',
  collect: (set) => {
    const s = sources.browser?.();
    if (s) set({}, s.queueMax);
  },
});

export function watchBrowser(read: () => BrowserStats): void {
  sources.browser = read;
}

metrics.gauge({
  name: 'drael_fetch_extraction_threads_busy',
  help: 'Tasks running on the extraction threads of this replica now (at most FETCH_EXTRACT_THREADS)',
  collect: (set) => {
    const s = sources.extraction?.();
    if (s) set({}, s.active);
  },
});
// As the browser's queue: a queue near its bound means fetches are about to be refused fetch_busy.
metrics.gauge({
  name: 'drael_fetch_extraction_queue_depth',
  help: 'Tasks waiting for an extraction thread on this replica (past FETCH_EXTRACT_MAX_QUEUE, or a tenant past its share, a fetch is refused fetch_busy)',
  collect: (set) => {
    const s = sources.extraction?.();
    if (s) set({}, s.queued);
  },
});

export function watchExtraction(read: () => ExtractionStats): void {
  sources.extraction = read;
}

/** Loads one page on one path and records it. */
export function measurePage<T>(path: 'http' | 'browser' | 'onion', load: () => Promise<T>): Promise<T> {
  return timedWithOutcome(pages.time({ path }), load, (err) => (err instanceof RpcError ? err.code : 'internal'));
}

export const recordSsrfRefusal = (reason: string) => refusals.inc({ reason });
export const recordCacheLookup = (hit: boolean) => cache.inc({ result: hit ? 'hit' : 'miss' });

const extractions = metrics.histogram({
  name: 'drael_fetch_extraction_duration_seconds',
  help: "Tasks on the extraction threads (waiting for a thread included), by task (read: an HTML page; text: a body that is not HTML formatted, JSON indented; focus: a page's focus found; encoding: an unlabelled body's encoding told) and outcome: ok, fetch_timeout (past FETCH_EXTRACT_TIMEOUT_MS: the thread was ended), body_too_large (past the thread's heap), fetch_busy (no thread within the tenant's share or the queue), internal",
  labels: { task: ['read', 'text', 'focus', 'encoding'], outcome: ['ok', 'fetch_timeout', 'body_too_large', 'fetch_busy', 'internal'] },
});

const EXTRACTION_OUTCOMES: ReadonlySet<string> = new Set(['fetch_timeout', 'body_too_large', 'fetch_busy']);

/** What the extraction threads do (extract/page-reader.worker.ts's exports). */
export type ExtractionTask = 'read' | 'text' | 'focus' | 'encoding';

/** One task on the extraction threads (extract/extraction-pool.ts), recorded. */
export function measureExtraction<T>(task: ExtractionTask, run: () => Promise<T>): Promise<T> {
  return timedWithOutcome(extractions.time({ task }), run, (err) => (err instanceof RpcError && EXTRACTION_OUTCOMES.has(err.code) ? err.code : 'internal'));
}

/** Runs `work`, then ends its timer with the outcome: `ok`, or what `outcomeOf` names its error. */
async function timedWithOutcome<T>(done: (end: { outcome: never }) => void, work: () => Promise<T>, outcomeOf: (err: unknown) => string): Promise<T> {
  let outcome = 'internal';
  try {
    const result = await work();
    outcome = 'ok';
    return result;
  } catch (err) {
    outcome = outcomeOf(err);
    throw err;
  } finally {
    done({ outcome: outcome as never });
  }
}
