import { fileURLToPath } from 'node:url';
import { ANONYMOUS_TENANT, FairSlots, type FairSlotLimits, type Refusal } from '@drael/fair-slots';
import { Piscina } from 'piscina';
import { fetchError, FetchError } from '../fetch-error.js';
import { measureExtraction, watchExtraction, type ExtractionTask } from '../fetch.metrics.js';
import type { FocusRequest, ReadPage, ReadRequest, TextRequest } from './page-reader.worker.js';

/** Each task's export in page-reader.worker.ts. */
const EXPORT_OF: Record<ExtractionTask, string> = { read: 'default', text: 'formatText', focus: 'focusContent', encoding: 'detectEncoding' };
// What each task is, in its refusals' messages.
const WHAT: Record<ExtractionTask, string> = { read: 'reading the page', text: 'formatting the text', focus: 'finding the focus', encoding: "telling the page's encoding" };

// The worker thread runs the built module: the service runs from dist, and the tests, which run the
// sources in-process, come after the build (`pnpm test` builds first). From src/extract and from
// dist/extract alike this names apps/fetch/dist/extract/page-reader.worker.js.
const WORKER_FILE = fileURLToPath(new URL('../../dist/extract/page-reader.worker.js', import.meta.url));

// A worker's heap. A 3 MB page (the most the HTTP path reads) parses and reads in under 128 MB;
// a page that needs more ends its worker alone, not the service (whose pod limit holds Chromium too).
const WORKER_HEAP_MB = 256;

/** The page a task is for: its URL (named in a refusal) and the tenant whose share it takes. */
export interface PageOf {
  readonly url: string;
  readonly tenant: string | undefined;
}

export interface ExtractionPoolOptions {
  /** Threads, queue and each tenant's share of both (FETCH_EXTRACT_*). */
  readonly slots: FairSlotLimits;
  /** How long one page may take to read once its thread has it; its wait for a thread is bounded by the same. */
  readonly timeoutMs: number;
}

/**
 * Does the work whose cost a fetched page decides on worker threads (piscina), never on the
 * service's event loop: reading an HTML page, formatting a body that is not HTML, finding a focus in a page's
 * content, telling an unlabelled body's encoding. Such work held the loop for seconds to minutes
 * on a hostile page (a few kilobytes of nested `<div>`s: linkedom's parse grows with the square of
 * the depth; 3 MB of nested JSON brackets: 1.7 s), and every other fetch, health answer and
 * heartbeat of the replica waited behind it; the fetch's own timeout could not stop it. Here a task
 * that runs past `timeoutMs` has its thread ended (piscina terminates a running task's worker when
 * its signal aborts) and is answered fetch_timeout; threads are shared fairly between tenants
 * (packages/fair-slots), so one tenant's hostile pages cannot hold every thread.
 */
export class ExtractionPool {
  private readonly workers: Piscina<unknown, unknown>;
  private readonly slots: FairSlots;

  constructor(private readonly options: ExtractionPoolOptions) {
    this.workers = new Piscina({
      filename: WORKER_FILE,
      // Every thread started at boot and kept: a page's time bound never pays for a thread to start
      // and import the extractor (a few hundred milliseconds, more on a loaded machine). ~40 MB each.
      minThreads: options.slots.max,
      maxThreads: options.slots.max,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    this.slots = new FairSlots(options.slots, busy);
    watchExtraction(() => this.slots.stats);
  }

  /** The page read, within its time; fetch_timeout past it, body_too_large past the heap, fetch_busy when no thread comes free. */
  read(req: ReadRequest, tenant: string | undefined): Promise<ReadPage> {
    return this.run<ReadPage>('read', req, { url: req.url, tenant });
  }

  /** The content of a body that is not HTML (JSON indented, XML fenced; page-reader.worker.ts formatText); bounded as `read`. */
  formatText(req: TextRequest, page: PageOf): Promise<string> {
    return this.run<string>('text', req, page);
  }

  /** The parts of a page's content about `focus` (focus.ts's applyFocus); bounded as `read`. */
  focus(req: FocusRequest, page: PageOf): Promise<string> {
    return this.run<string>('focus', req, page);
  }

  /** An unlabelled body's legacy encoding from a sample of its bytes (content-type.ts); bounded as `read`. */
  detectEncoding(sample: Buffer, page: PageOf): Promise<string | undefined> {
    return this.run<string | undefined>('encoding', sample, page);
  }

  /** One task on a thread within the tenant's share, within its time, recorded. */
  private run<T>(task: ExtractionTask, input: unknown, page: PageOf): Promise<T> {
    return measureExtraction(task, async () => {
      const release = await this.slots.acquire(page.tenant ?? ANONYMOUS_TENANT, { deadline: Date.now() + this.options.timeoutMs });
      const budget = AbortSignal.timeout(this.options.timeoutMs);
      try {
        return (await this.workers.run(input, { name: EXPORT_OF[task], signal: budget })) as T;
      } catch (err) {
        if (budget.aborted) {
          throw fetchError(
            'fetch_timeout',
            `${WHAT[task]} took longer than ${this.options.timeoutMs} ms (the page is too large or too deeply nested for it); nothing was returned`,
            { url: page.url, step: 'extract' },
          );
        }
        if ((err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
          throw fetchError('body_too_large', `${WHAT[task]} needed more than ${WORKER_HEAP_MB} MB; nothing was returned`, { url: page.url, step: 'extract' });
        }
        throw err;
      } finally {
        release();
      }
    });
  }

  /** Ends the threads (a page being read is dropped: its caller is going too). */
  async close(): Promise<void> {
    await this.workers.destroy();
  }
}

/** No thread within the tenant's share or the replica's queue: retryable, nothing was read. */
function busy(refusal: Refusal): FetchError {
  switch (refusal.share) {
    case 'tenant':
      return fetchError(
        'fetch_busy',
        `this tenant's share of page reading is taken (${refusal.running} of its ${refusal.maxPerTenant} pages at once, ${refusal.queued} of its ${refusal.queueMaxPerTenant} waiting); retry shortly`,
        { share: 'tenant', step: 'extract' },
        true,
      );
    case 'replica':
      return fetchError(
        'fetch_busy',
        `page reading is at capacity (${refusal.running} pages being read, ${refusal.queued} waiting); retry shortly`,
        { share: 'replica', step: 'extract' },
        true,
      );
    case 'deadline':
      return fetchError('fetch_busy', 'no thread came free to read the page in time; retry shortly', { share: 'deadline', step: 'extract' }, true);
  }
}
