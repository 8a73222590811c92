import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// The attack: a page whose script fills memory within the render's time. Unbounded, Chromium
// granted one page 3 GB of typed arrays in 6 s and 6 GB in 14 s, a plain array grew to ~4 GB before
// V8 gave up, and Cache Storage put 1.2 GB into the browser process in 2 s (an off-the-record
// context keeps it in memory, up to 15-20 % of the machine's): a few such pages at once took the
// machine, or the pod's limit with every tenant's renders and the service in it. Each page here
// stops at FILL_LIMIT_MB, so that a broken defence fails this test instead of taking the machine:
// far past the bound, well within the machine.
const RENDERER_MAX_MB = 256;
const FILL_LIMIT_MB = 1536;

let site: FixtureServer;
let runtime: FetchRuntime;

const story = Array.from({ length: 6 }, (_, i) => `Paragraph ${i + 1} of the harbour story: the ferry ran on time again, and the pier was rebuilt in stone.`);
const page = (title: string, script = '') =>
  `<html><head><title>${title}</title></head><body><main><h1>${title}</h1>${story.map((p) => `<p>${p}</p>`).join('')}</main>${script}</body></html>`;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/typed-arrays':
        // Off the JS heap: typed arrays of 64 MB, each written so its pages are really taken.
        return html(
          res,
          page(
            'Arrays',
            `<script>const kept = []; for (let i = 0; i < ${FILL_LIMIT_MB / 64}; i++) { const a = new Uint8Array(64 << 20); a.fill(1); kept.push(a); } window.kept = kept;</script>`,
          ),
        );
      case '/js-heap':
        // On the JS heap: arrays of numbers, 8 bytes each.
        return html(
          res,
          page('Heap', `<script>const kept = []; for (let i = 0; i < ${FILL_LIMIT_MB / 64}; i++) kept.push(new Array(8 << 20).fill(i + 0.5)); window.kept = kept;</script>`),
        );
      case '/cache-storage':
        // Into the browser process: Cache Storage, 32 MB a response. Little text and an API request
        // that answers late, so that the render waits its whole settling time as the cache fills.
        return html(
          res,
          `<html><head><title>Cache</title></head><body><p>Loading.</p><script>
(async () => {
  fetch('/slow-api');
  const chunk = new Uint8Array(32 << 20); chunk.fill(7);
  const cache = await caches.open('fill');
  for (let i = 0; i < ${FILL_LIMIT_MB / 32}; i++) await cache.put('/piece-' + i, new Response(new Blob([chunk, String(i)]))).catch(() => undefined);
})();
</script></body></html>`,
        );
      case '/slow-api':
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 5_000);
        return;
      case '/slow-story':
        // An ordinary page that answers after a while: in flight while another tenant's page is stopped.
        setTimeout(() => html(res, page('Harbour')), 1_500);
        return;
      case '/story':
        return html(res, page('Harbour'));
      default:
        res.writeHead(404).end();
    }
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false, rendererMaxMb: RENDERER_MAX_MB });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

describe('a page that fills its renderer’s memory', () => {
  it('is refused body_too_large once its renderer passes the bound, typed arrays or the JS heap alike; the tenant’s next page is read', async () => {
    for (const path of ['/typed-arrays', '/js-heap']) {
      const err = await failure(runtime.pages.fetch({ url: site.url(path), render: 'browser', tenant: 'tenant-hostile' }));
      expect(err.code, path).toBe('body_too_large');
      expect(err.details, path).toMatchObject({ max_memory_mb: RENDERER_MAX_MB });
    }
    const next = await runtime.pages.fetch({ url: site.url('/story'), render: 'browser', tenant: 'tenant-hostile' });
    expect(next.content).toContain(story[5]);
  });

  it('a page that fills the browser process through Cache Storage is refused body_too_large, and its context with what it stored goes; the tenant’s next page is read', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/cache-storage'), render: 'browser', tenant: 'tenant-storing' }));
    expect(err.code).toBe('body_too_large');
    expect(err.message).toContain('stored');
    expect(err.details).toMatchObject({ max_memory_mb: RENDERER_MAX_MB });
    const next = await runtime.pages.fetch({ url: site.url('/story'), render: 'browser', tenant: 'tenant-storing' });
    expect(next.content).toContain(story[5]);
  });

  it('another tenant’s page rendering at the same time is read: only the offending renderer is ended', async () => {
    const ordinary = runtime.pages.fetch({ url: site.url('/slow-story'), render: 'browser', tenant: 'tenant-ordinary' });
    const hostile = failure(runtime.pages.fetch({ url: site.url('/typed-arrays'), render: 'browser', tenant: 'tenant-hostile-2' }));
    expect((await hostile).code).toBe('body_too_large');
    expect((await ordinary).content).toContain(story[5]);
  });
});
