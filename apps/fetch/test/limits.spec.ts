import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FETCH_TIMEOUT_MS, MAX_BODY_BYTES, MAX_REDIRECTS } from '../src/http/http-fetcher.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, StubResolver, article, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

let site: FixtureServer;
let runtime: FetchRuntime;
let fast: FetchRuntime;
let flaky = 0;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/hang':
        return; // never answers
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<p>start</p>');
        return; // body never ends
      case '/slow-compressed': {
        // The first half of a compressed page, then nothing: the body never ends.
        const encoding = url.searchParams.get('e') ?? 'gzip';
        const page = Buffer.from(article('Compressed, then silence', 40));
        const body = encoding === 'br' ? brotliCompressSync(page) : encoding === 'deflate' ? deflateSync(page) : gzipSync(page);
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': encoding });
        res.write(body.subarray(0, body.length >> 1));
        return;
      }
      case '/big':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<p>' + 'x'.repeat(MAX_BODY_BYTES) + '</p>');
        return;
      case '/big-announced':
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(MAX_BODY_BYTES + 1) });
        res.end();
        return;
      case '/zip-bomb':
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(MAX_BODY_BYTES * 2, 0x61)));
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
        res.end(gzipSync(article('Compressed page', 4)));
        return;
      case '/hops': {
        const n = Number(url.searchParams.get('n'));
        if (n > 0) res.writeHead(302, { location: `/hops?n=${n - 1}` }).end();
        else html(res, article('Arrived', 3));
        return;
      }
      case '/refresh': {
        // A "this page has moved" page: a meta refresh at once to the next hop.
        const n = Number(url.searchParams.get('n'));
        const to = url.searchParams.get('to');
        if (to) html(res, `<html><head><meta http-equiv="refresh" content="0; url=${to}"></head><body><p>This page has moved.</p></body></html>`);
        else if (n > 0) html(res, `<html><head><meta http-equiv="refresh" content="0; url=/refresh?n=${n - 1}"></head><body><p>This page has moved.</p></body></html>`);
        else html(res, article('Arrived by refresh', 3));
        return;
      }
      case '/type': {
        const type = url.searchParams.get('t') ?? '';
        const body = url.searchParams.get('b') ?? 'body';
        res.writeHead(200, type ? { 'content-type': type } : {});
        res.end(body);
        return;
      }
      case '/status':
        html(res, '<p>error page</p>', Number(url.searchParams.get('s')));
        return;
      case '/flaky':
        flaky++;
        if (flaky === 1) html(res, '<p>down</p>', 500);
        else html(res, article(`Flaky page, attempt ${flaky}`, 3));
        return;
      case '/latin1':
        res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' });
        res.end(Buffer.from('<html lang="fr"><body><article><h1>Caf\xe9</h1><p>' + 'D\xe9j\xe0 vu, na\xefve fa\xe7ade. '.repeat(12) + '</p></article></body></html>', 'latin1'));
        return;
      default:
        html(res, article(`Page ${url.pathname}`, 40));
    }
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, browser: false });
  fast = makeRuntime({ allow: FIXTURE_ALLOW, browser: false, cache: false, httpLimits: { timeoutMs: 800 } });
});

afterAll(async () => {
  await runtime?.close();
  await fast?.close();
  await site?.close();
});

describe('limits', () => {
  it('spec values: 10 s, 3 MB, 3 redirects', () => {
    expect(FETCH_TIMEOUT_MS).toBe(10_000);
    expect(MAX_BODY_BYTES).toBe(3 * 1024 * 1024);
    expect(MAX_REDIRECTS).toBe(3);
  });

  it('a server that never answers → fetch_timeout, retryable', async () => {
    const err = await failure(fast.pages.fetch({ url: site.url('/hang'), render: 'http' }));
    expect(err.code).toBe('fetch_timeout');
    expect((err as unknown as { retryable: boolean }).retryable).toBe(true);
  });

  it('a body that never ends → fetch_timeout', async () => {
    const err = await failure(fast.pages.fetch({ url: site.url('/slow-body'), render: 'http' }));
    expect(err.code).toBe('fetch_timeout');
  });

  it('a compressed body that never ends → fetch_timeout, whatever its encoding (the decompressor never heard of the timeout: the fetch hung for good)', async () => {
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const err = await failure(fast.pages.fetch({ url: site.url(`/slow-compressed?e=${encoding}`), render: 'http' }));
      expect(err.code, encoding).toBe('fetch_timeout');
    }
  });

  it("a name whose DNS never answers → dns_failure within the connect's time, not a fetch held for good", async () => {
    const silent = { resolve: () => new Promise<never>(() => undefined) };
    const deaf = makeRuntime({ allow: FIXTURE_ALLOW, browser: false, cache: false, resolver: silent });
    try {
      const err = await failure(deaf.pages.fetch({ url: 'http://dns-never-answers.com/', render: 'http' }));
      expect(err.code).toBe('dns_failure');
      expect(err.message).toMatch(/could not resolve dns-never-answers\.com within 3000 ms/);
    } finally {
      await deaf.close();
    }
  });

  it('a body over 3 MB → body_too_large (streamed)', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/big'), render: 'http' }));
    expect(err.code).toBe('body_too_large');
    expect(err.details).toMatchObject({ max_bytes: MAX_BODY_BYTES });
  });

  it('a Content-Length over 3 MB → body_too_large before reading', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/big-announced'), render: 'http' }));
    expect(err.code).toBe('body_too_large');
  });

  it('a gzip body that inflates past 3 MB → body_too_large', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/zip-bomb'), render: 'http' }));
    expect(err.code).toBe('body_too_large');
  });

  it('a gzip body is decoded', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/gzip'), render: 'http' });
    expect(page.content).toContain('Paragraph 2 of Compressed page');
  });

  it('3 redirects are followed', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/hops?n=3'), render: 'http' });
    expect(page.final_url).toBe(site.url('/hops?n=0'));
    expect(page.content).toContain('Arrived');
  });

  it('a 4th redirect → too_many_redirects', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/hops?n=4'), render: 'http' }));
    expect(err.code).toBe('too_many_redirects');
  });

  it.each([
    ['text/plain; charset=utf-8', 'plain words here', 'plain words here'],
    ['text/markdown', '# Title\n\nbody', '# Title\n\nbody'],
    ['application/json', '{"a":1}', '```json\n{\n  "a": 1\n}\n```'],
    ['application/ld+json', '{"@type":"Thing"}', '"@type": "Thing"'],
    ['application/xml', '<r><a>1</a></r>', '```xml\n<r><a>1</a></r>\n```'],
    ['application/rss+xml', '<rss><channel/></rss>', '<rss><channel/></rss>'],
    ['application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>xhtml body text</p></body></html>', 'xhtml body text'],
    ['', '<html><body><p>unlabelled html</p></body></html>', 'unlabelled html'],
  ])('content type %j is accepted', async (type, body, expected) => {
    const page = await runtime.pages.fetch({ url: site.url(`/type?t=${encodeURIComponent(type)}&b=${encodeURIComponent(body)}`), render: 'http' });
    expect(page.content).toContain(expected);
  });

  it.each(['image/png', 'application/pdf', 'application/octet-stream', 'video/mp4', 'application/javascript'])('content type %s → unsupported_content_type', async (type) => {
    const err = await failure(runtime.pages.fetch({ url: site.url(`/type?t=${encodeURIComponent(type)}`), render: 'http' }));
    expect(err.code).toBe('unsupported_content_type');
    expect(err.details).toMatchObject({ content_type: type });
  });

  it.each([404, 410, 500, 503])('upstream %i → upstream_error with {status, url}', async (status) => {
    const url = site.url(`/status?s=${status}`);
    const err = await failure(runtime.pages.fetch({ url, render: 'http' }));
    expect(err.code).toBe('upstream_error');
    expect(err.details).toEqual({ status, url });
  });

  it('a refused connection → connection_failed', async () => {
    const err = await failure(runtime.pages.fetch({ url: `http://${FIXTURE_HOST}:1/`, render: 'http' }));
    expect(err.code).toBe('connection_failed');
  });

  it('a name that does not resolve → dns_failure', async () => {
    const rt = makeRuntime({ browser: false, cache: false, resolver: new StubResolver(() => []) });
    try {
      const err = await failure(rt.pages.fetch({ url: 'http://no-such-host.test/', render: 'http' }));
      expect(err.code).toBe('dns_failure');
    } finally {
      await rt.close();
    }
  });

  it('the browser path turned off → browser_unavailable', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/'), render: 'browser' }));
    expect(err.code).toBe('browser_unavailable');
  });

  it('a declared charset is honoured', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/latin1'), render: 'http' });
    expect(page.content).toContain('Déjà vu, naïve façade.');
    expect(page.lang).toBe('fr');
  });
});

describe('meta refresh (extraction pass, finding 14)', () => {
  it('a page that refreshes at once to another is followed as a redirect: the model gets the page it points to', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/refresh?n=1'), render: 'http' });
    expect(page.final_url).toBe(site.url('/refresh?n=0'));
    expect(page.content).toContain('Paragraph 1 of Arrived by refresh');
    expect(page.content).not.toContain('This page has moved');
  });

  it('refreshes count toward the 3 redirects', async () => {
    expect((await runtime.pages.fetch({ url: site.url('/refresh?n=3'), render: 'http' })).final_url).toBe(site.url('/refresh?n=0'));
    expect((await failure(runtime.pages.fetch({ url: site.url('/refresh?n=4'), render: 'http' }))).code).toBe('too_many_redirects');
  });

  it('a refresh to a private address is refused as a redirect there is', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url(`/refresh?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`), render: 'http' }));
    expect(err.code).toBe('blocked_address');
  });
});

describe('max_chars, focus and the 1 MiB bound', () => {
  it('max_chars cuts and says so', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/long'), render: 'http', max_chars: 500 });
    expect(page.truncated).toBe(true);
    expect(page.chars).toBeLessThanOrEqual(500);
    expect(page.chars).toBe(page.content.length);
  });

  it('a long page read window by window: each ends on a boundary, next_offset goes on where it stopped, and the windows together are the page', async () => {
    const whole = await runtime.pages.fetch({ url: site.url('/windows'), render: 'http' });
    expect(whole.truncated).toBe(false);
    expect(whole.total_chars).toBe(whole.content.length);
    const windows: string[] = [];
    let offset: number | undefined = 0;
    for (let i = 0; offset !== undefined && i < 100; i++) {
      const page = await runtime.pages.fetch({ url: site.url('/windows'), render: 'http', max_chars: 700, offset });
      expect(page.total_chars).toBe(whole.content.length);
      expect(page.chars).toBeLessThanOrEqual(700);
      // A window stops after a whole sentence ("... of Page /windows.") or at a paragraph's end, never inside a word.
      if (page.next_offset !== undefined) {
        expect(page.truncated).toBe(true);
        expect(page.content, page.content.slice(-40)).toMatch(/\.$/);
        expect(page.next_offset).toBeGreaterThan(offset);
      }
      windows.push(page.content);
      offset = page.next_offset;
    }
    expect(offset).toBeUndefined();
    expect(windows.length).toBeGreaterThan(3);
    expect(windows.join(' ').replace(/\s+/g, ' ')).toBe(whole.content.replace(/\s+/g, ' '));
    // Past the end: nothing, and not cut.
    const past = await runtime.pages.fetch({ url: site.url('/windows'), render: 'http', offset: whole.content.length + 10 });
    expect(past).toMatchObject({ content: '', chars: 0, truncated: false, total_chars: whole.content.length });
    expect(past.next_offset).toBeUndefined();
  });

  it('without max_chars a short page is whole', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/short'), render: 'http' });
    expect(page.truncated).toBe(false);
    expect(page.content).toContain('Paragraph 40 of Page /short');
  });
});

describe('cache', () => {
  it('the second fetch is served from the cache; max_chars applies to the cached page', async () => {
    const url = site.url('/cached');
    const first = await runtime.pages.fetch({ url, render: 'http' });
    const hits = site.hits.filter((h) => h === '/cached').length;
    const second = await runtime.pages.fetch({ url: `${url}#fragment`, render: 'http', max_chars: 100 });
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.truncated).toBe(true);
    expect(site.hits.filter((h) => h === '/cached').length).toBe(hits);
  });

  it('focus and render mode are part of the key', async () => {
    const url = site.url('/keyed');
    await runtime.pages.fetch({ url, render: 'http' });
    const focused = await runtime.pages.fetch({ url, render: 'http', focus: 'Paragraph 7' });
    const auto = await runtime.pages.fetch({ url });
    expect(focused.cached).toBe(false);
    expect(auto.cached).toBe(false);
  });

  it('failures are not cached', async () => {
    const url = site.url('/flaky');
    const err = await failure(runtime.pages.fetch({ url, render: 'http' }));
    expect(err.code).toBe('upstream_error');
    const page = await runtime.pages.fetch({ url, render: 'http' });
    expect(page.cached).toBe(false);
    expect(page.content).toContain('attempt 2');
  });
});
