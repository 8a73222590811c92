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
// A heading of 220 KB over 4,000 short paragraphs (a 300 KB page as read). Finding a focus scored
// the heading again for every block under it: 70 s on the service's loop for this page.
const LONG_HEADING = `<!doctype html><html><head><title>Long heading</title></head><body><article><h2>${'Focus word '.repeat(20_000)}</h2>${'<p>A focus paragraph.</p>'.repeat(4_000)}</article></body></html>`;
// 2.4 MB of nested JSON arrays: JSON.parse alone takes over a second, and writing it out again overflows the stack.
const NESTED_JSON = `${'['.repeat(1_200_000)}${']'.repeat(1_200_000)}`;
// 20 KB of JSON 5,000 deep, one value at each level: indented, every line deeper than the last,
// it came out as 75 MB (a second of the service's loop to take from the thread, and that much cached).
const INDENTED_JSON = `${'[1,'.repeat(5_000)}1${']'.repeat(5_000)}`;
// Letters and U+0001 in turn: JSON writes each control character as six (a 3 MB one cached as 18 MB).
const CONTROLS_TEXT = 'a\u0001'.repeat(50_000);
/** `text` in windows-1251 (the decoder's table, inverted), as an unlabelled Russian page of the 2000s is served. */
const windows1251 = (text: string) => {
  const byChar = new Map([...new TextDecoder('windows-1251').decode(Uint8Array.from({ length: 256 }, (_, i) => i))].map((c, i) => [c, i]));
  return Buffer.from([...text].map((c) => byChar.get(c) ?? 0x3f));
};
const RUSSIAN = 'Городской совет утвердил план ремонта набережной. Работы начнутся весной и продлятся около двух лет.';

let site: FixtureServer;
let runtime: FetchRuntime;
let tight: FetchRuntime;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/nested') html(res, nested(Number(url.searchParams.get('depth')), INNER));
    else if (url.pathname === '/long-heading') html(res, LONG_HEADING);
    else if (url.pathname === '/nested.json') res.writeHead(200, { 'content-type': 'application/json' }).end(NESTED_JSON);
    else if (url.pathname === '/indented.json') res.writeHead(200, { 'content-type': 'application/json' }).end(INDENTED_JSON);
    else if (url.pathname === '/controls.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end(CONTROLS_TEXT);
    else if (url.pathname === '/unlabelled') {
      // No charset in the header or the page: only the bytes tell.
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(windows1251(`<html><head><title>Новости</title></head><body><h1>Новости</h1><p>${RUSSIAN}</p><p>${RUSSIAN}</p></body></html>`));
    } else html(res, article(`Page ${url.pathname}`, 6));
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

describe('hostile pages: all the work a page decides runs on the threads', () => {
  const counted = async (task: string, outcome = 'ok') => sampleValue(await metrics.registry.metrics(), 'drael_fetch_extraction_duration_seconds_count', { task, outcome });

  it("a focus is found on the threads, in time linear in the page (a long heading over thousands of blocks took 70 s on the service's loop)", async () => {
    const before = await counted('focus');
    const page = await runtime.pages.fetch({ url: site.url('/long-heading'), render: 'http', focus: 'focus paragraph' });
    expect(page.content).toContain('A focus paragraph.');
    expect(await counted('focus')).toBe(before + 1);
  });

  it("a JSON body is formatted on the threads; a JSON too deep to write out again is returned as it came, another tenant's page read meanwhile", async () => {
    const before = await counted('text');
    const done: string[] = [];
    const json = runtime.pages.fetch({ url: site.url('/nested.json'), render: 'http', tenant: 'json', max_chars: 1_000 }).then((p) => {
      done.push('json');
      return p;
    });
    const ordinary = await runtime.pages.fetch({ url: site.url('/while-json'), render: 'http', tenant: 'reader' });
    done.push('ordinary');
    expect(ordinary.content).toContain('Paragraph 1 of Page /while-json');
    const page = await json;
    expect(page.content.startsWith('```json\n[[[[')).toBe(true);
    expect(page.truncated).toBe(true);
    expect(await counted('text')).toBe(before + 1);
    expect(done).toEqual(['ordinary', 'json']);
  });

  it("an unlabelled page's encoding is told on the threads (chardet's statistics: 65 ms on 64 KB of hostile bytes), and told right", async () => {
    const before = await counted('encoding');
    const page = await runtime.pages.fetch({ url: site.url('/unlabelled'), render: 'http' });
    expect(page.title).toBe('Новости');
    expect(page.content).toContain(RUSSIAN);
    expect(await counted('encoding')).toBe(before + 1);
  });

  it('a JSON body that indentation would blow up is returned as it came (20 KB nested 5,000 deep came out as 75 MB)', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/indented.json'), render: 'http' });
    expect(page.total_chars).toBeLessThan(INDENTED_JSON.length + 100);
    expect(page.content).toBe(`\`\`\`json\n${INDENTED_JSON}\n\`\`\``);
  });

  it('control characters are left out of a text body (each cached as six characters)', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/controls.txt'), render: 'http' });
    expect(page.content).toBe('a'.repeat(50_000));
  });
});
