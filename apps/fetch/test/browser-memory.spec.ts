import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { metrics, setMetricsEnabled } from '@drael/metrics';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_HOST, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

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
// Sites of their own (an address is a site): a frame from each gets a renderer of its own.
const FRAME_HOSTS = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
const FRAME_MB = 200;
let frameSites: FixtureServer[] = [];
let runtime: FetchRuntime;
/** The /cache-hold answers waiting for the Cache Storage page to say it has stored everything. */
const heldUntilFilled: (() => void)[] = [];

/** CPU time (clock ticks) used so far by each Chromium renderer this process started (Linux /proc). */
function rendererTicks(): Map<number, number> {
  const parentOf = new Map<number, number>();
  const ticks = new Map<number, number>();
  const renderers: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(name), Number(fields[1]));
      ticks.set(Number(name), Number(fields[11]) + Number(fields[12]));
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes('--type=renderer')) renderers.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return new Map(renderers.filter(ours).map((pid) => [pid, ticks.get(pid) ?? 0]));
}

function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('--type=renderer');
  } catch {
    return false;
  }
}

/** drael_fetch_memory_stops_total{where} as this process's registry has it now. */
async function memoryStops(where: string): Promise<number> {
  const { body } = await metrics.render();
  return Number(new RegExp(`^drael_fetch_memory_stops_total\\{where="${where}"\\} (\\d+)$`, 'm').exec(body)?.[1] ?? 0);
}

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
        // Into the browser process: Cache Storage, 32 MB a response. The page's `load` waits for an
        // image the server holds until the page says its filling is done, so the render is in
        // flight for the whole filling, however fast this machine fills: with the bound, the render
        // is stopped on the way; without it, it ends with a result once FILL_LIMIT_MB is stored.
        return html(
          res,
          `<html><head><title>Cache</title></head><body><p>Loading.</p><script>
(async () => {
  const chunk = new Uint8Array(32 << 20); chunk.fill(7);
  const cache = await caches.open('fill');
  for (let i = 0; i < ${FILL_LIMIT_MB / 32}; i++) await cache.put('/piece-' + i, new Response(new Blob([chunk, String(i)]))).catch(() => undefined);
  fetch('/cache-filled');
})();
</script><img src="/cache-hold" alt=""></body></html>`,
        );
      case '/cache-hold': {
        // Answered when the page has stored everything, or after 30 s (nothing is left hanging).
        const answer = () => {
          if (!res.headersSent) res.writeHead(204).end();
        };
        heldUntilFilled.push(answer);
        setTimeout(answer, 30_000).unref();
        return;
      }
      case '/cache-filled':
        for (const answer of heldUntilFilled.splice(0)) answer();
        res.writeHead(204).end();
        return;
      case '/slow-api':
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 5_000);
        return;
      case '/popups':
        // Every way a page opens another without a click of its own: window.open (with and without
        // an opener), a target=_blank link it clicks, window.open of a frame it made.
        return html(
          res,
          page(
            'Popups',
            `<a id="out" href="/pop-link" target="_blank">more</a><script>
window.open('/pop-open'); window.open('/pop-noopener', '_blank', 'noopener');
document.getElementById('out').click();
const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.open('/pop-frame');
</script>`,
          ),
        );
      case '/framing-sites':
        // Frames from four other sites, each filling a renderer of its own to under the bound.
        return html(res, page('Framed', `${frameSites.map((f) => `<iframe src="${f.url('/fill')}"></iframe>`).join('')}<script>fetch('/slow-api');</script>`));
      case '/webgl':
        // Textures went to the GPU process's memory, which no bound watches: the page says what it got.
        return html(
          res,
          `<html><head><title>Canvas</title></head><body><main><h1>Canvas</h1>${story.map((p) => `<p>${p}</p>`).join('')}<p id="gl">Probing the canvas.</p></main><script>
const gl = document.createElement('canvas').getContext('webgl') || document.createElement('canvas').getContext('webgl2');
(navigator.gpu ? navigator.gpu.requestAdapter().catch(() => null) : Promise.resolve(null)).then((adapter) => {
  document.getElementById('gl').textContent = 'WebGL ' + (gl ? 'available' : 'absent') + ', WebGPU ' + (adapter ? 'available' : 'absent') + '.';
});
</script></body></html>`,
        );
      case '/spin-on-leave':
        // Read as any page, then a loop that never yields once the page is left (or on a timer
        // after the render): its renderer cannot go to the blank page it is sent to between requests.
        return html(res, page('Spinner', `<script>addEventListener('pagehide', () => { for (;;) {} });</script>`));
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
  frameSites = await Promise.all(
    FRAME_HOSTS.map((host) =>
      startFixtureServer(host, (_req, res) =>
        html(res, `<html><body><p>frame</p><script>const a = new Uint8Array(${FRAME_MB} << 20); a.fill(1); window.kept = a;</script></body></html>`),
      ),
    ),
  );
  setMetricsEnabled(true);
  // 127.0.0.0/29: the page's own host and the frames' (the SSRF guard lets nothing else loopback through).
  runtime = makeRuntime({ allow: '127.0.0.0/29', cache: false, rendererMaxMb: RENDERER_MAX_MB });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
  await Promise.all(frameSites.map((f) => f.close()));
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

  it('frames of other sites, each under the bound, are held together to the bound times the pages at once: the largest renderers go, the page is refused', async () => {
    const before = await memoryStops('renderer');
    // Four frames of 200 MiB each, under the 256 MiB bound one by one, past 2 pages × 256 MiB together.
    const err = await failure(runtime.pages.fetch({ url: site.url('/framing-sites'), render: 'browser', tenant: 'tenant-framing' }));
    expect(err.code).toBe('body_too_large');
    expect(await memoryStops('renderer')).toBeGreaterThan(before);
    const next = await runtime.pages.fetch({ url: site.url('/story'), render: 'browser', tenant: 'tenant-framing' });
    expect(next.content).toContain(story[5]);
  });

  it('a page gets no WebGL or WebGPU, whose memory would be the GPU process’s', async () => {
    const rendered = await runtime.pages.fetch({ url: site.url('/webgl'), render: 'browser', tenant: 'tenant-canvas' });
    expect(rendered.content).toContain('WebGL absent, WebGPU absent.');
  });

  it('a page opens no popup, however it asks', async () => {
    const rendered = await runtime.pages.fetch({ url: site.url('/popups'), render: 'browser', tenant: 'tenant-popups' });
    expect(rendered.content).toContain(story[5]);
    expect(site.hits.filter((h) => h.startsWith('/pop-'))).toEqual([]);
  });
});

describe('a page that will not be left', () => {
  it('a tenant’s page whose script never yields once left is closed with its context, not kept spinning a core; the tenant’s next page is read', async () => {
    const spinner = await runtime.pages.fetch({ url: site.url('/spin-on-leave'), render: 'browser', tenant: 'tenant-spinning' });
    expect(spinner.content).toContain(story[5]);
    const readAt = Date.now();
    // Sent to the blank page, it spins: the renderer that used the most CPU over a second is it.
    const before = rendererTicks();
    await new Promise((r) => setTimeout(r, 1_000));
    const grown = [...rendererTicks()].map(([pid, t]) => [pid, t - (before.get(pid) ?? t)] as const).sort((a, b) => b[1] - a[1]);
    const [spinning, ticks] = grown[0] ?? [0, 0];
    expect(ticks).toBeGreaterThan(10);
    // The blank page is waited for 5 s; then its context goes, and the renderer with it.
    await new Promise((r) => setTimeout(r, Math.max(0, readAt + 7_000 - Date.now())));
    expect(isRunning(spinning)).toBe(false);
    const next = await runtime.pages.fetch({ url: site.url('/story'), render: 'browser', tenant: 'tenant-spinning' });
    expect(next.content).toContain(story[5]);
  });
});
