import { metrics, sampleValue } from '@drael/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, article, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// Pages whose HTML costs the reader what the page decides. The attack: a few kilobytes of `<div>`s,
// one inside the next. A thousand took Readability seconds on the service's event loop; tens of
// thousands overflowed the stack of every recursive walk; two hundred thousand (2.2 MB, under the
// 3 MB the HTTP path reads) held linkedom's parse alone for most of a minute, while every other
// fetch, health answer and heartbeat of the replica waited, and the fetch's timeout could not stop it.
const nested = (depth: number, inner: string) =>
  `<!doctype html><html><head><title>Nested</title></head><body>${'<div>'.repeat(depth)}${inner}${'</div>'.repeat(depth)}</body></html>`;
// Plain paragraphs, no <article> or <main> to scope Readability to: it scores the whole chain.
const INNER = '<p>The innermost paragraph of the nested page, long enough to be read as its content by any reader.</p>'.repeat(5);

let site: FixtureServer;
let runtime: FetchRuntime;
let tight: FetchRuntime;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/nested') html(res, nested(Number(url.searchParams.get('depth')), INNER));
    else html(res, article(`Page ${url.pathname}`, 6));
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, browser: false, cache: false });
  // Reading stopped after 2 s; each tenant one thread of two and one place in the queue.
  tight = makeRuntime({
    allow: FIXTURE_ALLOW,
    browser: false,
    cache: false,
    extract: { FETCH_EXTRACT_THREADS: 2, FETCH_EXTRACT_MAX_QUEUE: 4, FETCH_EXTRACT_THREADS_PER_TENANT: 1, FETCH_EXTRACT_MAX_QUEUE_PER_TENANT: 1, FETCH_EXTRACT_TIMEOUT_MS: 2_000 },
  });
  // Each thread's first page warms its compiled code (a best effort: on a loaded machine a first
  // read may be slow), so the ordinary page below is read far inside the hostile pages' 2 s.
  await Promise.allSettled([
    tight.pages.fetch({ url: site.url('/warm-1'), render: 'http', tenant: 'warm-1' }),
    tight.pages.fetch({ url: site.url('/warm-2'), render: 'http', tenant: 'warm-2' }),
  ]);
});

afterAll(async () => {
  await runtime?.close();
  await tight?.close();
  await site?.close();
});

describe('hostile pages: the reader is bounded', () => {
  it('a page nested deeper than a browser builds is read as Chromium reads it, within its time (as built, Readability alone needs most of a minute for it)', async () => {
    // 3,000 deep: Readability alone needs most of a minute for it as built; read at 512 deep, under a second.
    const page = await runtime.pages.fetch({ url: site.url('/nested?depth=3000'), render: 'http' });
    expect(page.content).toContain('The innermost paragraph of the nested page');
    expect(page.title).toBe('Nested');
  });

  it("a page that takes longer than FETCH_EXTRACT_TIMEOUT_MS to read is answered fetch_timeout; another tenant's page is read meanwhile, the event loop never held", async () => {
    const counted = async (outcome: string) => sampleValue(await metrics.registry.metrics(), 'drael_fetch_extraction_duration_seconds_count', { outcome });
    const before = { timeout: await counted('fetch_timeout'), busy: await counted('fetch_busy') };
    const done: string[] = [];
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const hostile = (n: number) =>
      failure(tight.pages.fetch({ url: site.url(`/nested?depth=200000&n=${n}`), render: 'http', tenant: 'evil' })).then((err) => {
        done.push(`${err.code} ${n}`);
        return err;
      });
    const hostiles = [hostile(1), hostile(2), hostile(3)];
    const ticksBefore = ticks;
    const ordinary = await tight.pages.fetch({ url: site.url('/ordinary'), render: 'http', tenant: 'reader' });
    done.push('ordinary');
    expect(ordinary.content).toContain('Paragraph 6 of Page /ordinary');
    const errors = await Promise.all(hostiles);
    clearInterval(ticker);
    // One read at a time and one waiting for the tenant: the third is refused at once, whichever arrives last.
    expect(errors.filter((e) => e.code === 'fetch_busy' && e.details?.share === 'tenant')).toHaveLength(1);
    const stopped = errors.filter((e) => e.code === 'fetch_timeout');
    expect(stopped.length).toBeGreaterThanOrEqual(1);
    for (const e of stopped) {
      expect(e.details).toMatchObject({ step: 'extract' });
      expect(e.message).toMatch(/took longer than 2000 ms/);
    }
    // The one that waited was then stopped too, or its wait ran out.
    for (const e of errors) expect(['fetch_timeout', 'fetch_busy']).toContain(e.code);
    // Another tenant's page was read while the hostile ones were.
    const ordinaryAt = done.indexOf('ordinary');
    done.forEach((d, i) => {
      if (d.startsWith('fetch_timeout')) expect(ordinaryAt, done.join(', ')).toBeLessThan(i);
    });
    // Timers kept firing while the hostile pages were being read.
    expect(ticks).toBeGreaterThan(ticksBefore);
    // As scraped: each outcome counted, no thread busy and nothing waiting once they ended.
    expect(await counted('fetch_timeout')).toBe(before.timeout + stopped.length);
    expect(await counted('fetch_busy')).toBe(before.busy + errors.length - stopped.length);
    const scraped = await metrics.registry.metrics();
    expect(sampleValue(scraped, 'drael_fetch_extraction_threads_busy')).toBe(0);
    expect(sampleValue(scraped, 'drael_fetch_extraction_queue_depth')).toBe(0);
    // The tenant's thread is its own again: its next ordinary page is read.
    const after = await tight.pages.fetch({ url: site.url('/after'), render: 'http', tenant: 'evil' });
    expect(after.content).toContain('Paragraph 1 of Page /after');
  });
});
