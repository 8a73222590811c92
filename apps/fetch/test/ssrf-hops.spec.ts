import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, StubResolver, article, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// Hops the URL text cannot show: redirects, DNS answers, and what a rendered page asks for.
// Only 127.0.0.2 (the public stand-in) is opened in the guard; 127.0.0.1 is the "internal"
// target and stays blocked by the production rules.
let pub: FixtureServer;
let internal: FixtureServer;
let runtime: FetchRuntime;
let resolver: StubResolver;

beforeAll(async () => {
  internal = await startFixtureServer('127.0.0.1', (_req, res) => html(res, '<p>internal secret</p>'));
  pub = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const to = url.searchParams.get('to');
    if (url.pathname === '/redirect' && to) {
      const left = Number(url.searchParams.get('n') ?? '0');
      const next = left > 0 ? `/redirect?n=${left - 1}&to=${encodeURIComponent(to)}` : to;
      res.writeHead(302, { location: next }).end();
      return;
    }
    if (url.pathname === '/subresources') {
      const i = `http://127.0.0.1:${internal.port}`;
      html(
        res,
        `<!doctype html><html><head><title>Subresources</title><link rel="stylesheet" href="${i}/style.css"><script src="${i}/script.js"></script></head><body>` +
          `<article><h1>Subresources</h1>${'<p>A page whose subresources and sockets aim at loopback; the text itself is harmless and long enough to read.</p>'.repeat(6)}</article>` +
          `<img src="${i}/img.png" alt="x"><iframe src="http://localhost:${internal.port}/frame"></iframe>` +
          `<script>fetch("${i}/api").catch(()=>{}); try { new WebSocket("ws://127.0.0.1:${internal.port}/ws"); } catch (e) {}` +
          ` try { new WebSocket("ws://[::ffff:127.0.0.1]:${internal.port}/ws2"); } catch (e) {} navigator.sendBeacon && navigator.sendBeacon("${i}/beacon", "x");</script>` +
          `</body></html>`,
      );
      return;
    }
    // Connection: close, so every fetch dials (and resolves) again.
    html(res, article('Public page', 4), 200, { connection: 'close' });
  });
  resolver = new StubResolver((name, nth) => {
    switch (name) {
      case 'public.test':
        return [FIXTURE_HOST];
      case 'internal.test':
        return ['10.0.0.5'];
      case 'metadata.test':
        return ['169.254.169.254'];
      case 'loopback.test':
        return ['127.0.0.1'];
      case 'mapped.test':
        return ['::ffff:127.0.0.1'];
      case 'nat64.test':
        return ['64:ff9b::a9fe:a9fe'];
      case 'mixed.test':
        return [FIXTURE_HOST, '127.0.0.1'];
      // A cloud's resolver answers its metadata names; here they answer the (test-allowed)
      // public stand-in, so only the refusal by name can stop them.
      case 'metadata.google.internal':
      case 'metadata.goog':
      case 'metadata':
      case 'instance-data':
        return [FIXTURE_HOST];
      case 'rebind.test':
        // Public on the first answer, internal from then on.
        return nth === 1 ? [FIXTURE_HOST] : ['127.0.0.1'];
      default:
        return [];
    }
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, resolver, cache: false });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await pub?.close();
  await internal?.close();
});

describe('redirects are vetted on every hop', () => {
  it.each(['http', 'browser'] as const)('a chain of redirects ending on 127.0.0.1 is refused (%s)', async (render) => {
    const target = `http://127.0.0.1:${internal.port}/secret`;
    const err = await failure(runtime.pages.fetch({ url: pub.url(`/redirect?n=2&to=${encodeURIComponent(target)}`), render }));
    expect(err.code).toBe('blocked_address');
    expect(internal.hits).toEqual([]);
  });

  it.each([
    ['localhost', () => `http://localhost:${internal.port}/`],
    ['IPv4-mapped', () => `http://[::ffff:127.0.0.1]:${internal.port}/`],
    ['decimal', () => `http://2130706433:${internal.port}/`],
    ['a name that resolves to loopback', () => `http://loopback.test:${internal.port}/`],
    ['a name that resolves to metadata', () => 'http://metadata.test/latest/meta-data/'],
    ['the metadata name metadata.google.internal', () => `http://metadata.google.internal:${pub.port}/computeMetadata/v1/`],
  ])('a redirect to %s is refused', async (_label, to) => {
    const err = await failure(runtime.pages.fetch({ url: pub.url(`/redirect?to=${encodeURIComponent(to())}`), render: 'http' }));
    expect(err.code).toBe('blocked_address');
    expect(internal.hits).toEqual([]);
  });

  it('a redirect to a non-HTTP scheme is a bad_request', async () => {
    const err = await failure(runtime.pages.fetch({ url: pub.url(`/redirect?to=${encodeURIComponent('file:///etc/passwd')}`), render: 'http' }));
    expect(err.code).toBe('bad_request');
  });

  it('a redirect to credentials in the URL is a bad_request', async () => {
    const to = `http://admin:admin@${FIXTURE_HOST}:${pub.port}/`;
    const err = await failure(runtime.pages.fetch({ url: pub.url(`/redirect?to=${encodeURIComponent(to)}`), render: 'http' }));
    expect(err.code).toBe('bad_request');
  });
});

describe('names are judged by what they resolve to, where the connection is made', () => {
  it.each([
    ['internal.test', '10.0.0.5', 'private'],
    ['metadata.test', '169.254.169.254', 'linkLocal'],
    ['loopback.test', '127.0.0.1', 'loopback'],
    ['mapped.test', '::ffff:127.0.0.1', 'ipv4Mapped'],
    ['nat64.test', '64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['mixed.test', '127.0.0.1', 'loopback'],
  ])('%s → %s is refused on both paths', async (name, address, range) => {
    for (const render of ['http', 'browser'] as const) {
      const err = await failure(runtime.pages.fetch({ url: `http://${name}:${internal.port}/`, render }));
      expect(err.code).toBe('blocked_address');
      // Neither the address nor its kind is told: internal names cannot be mapped.
      expect(err.message).toMatch(new RegExp(`^refusing to fetch (http://)?${name}:${internal.port}/?: the host does not resolve to a public address$`));
      expect(err.message).not.toContain(address);
      expect(err.message).not.toContain(`${range} address`);
      expect(err.details).not.toHaveProperty('address');
      expect(err.details).not.toHaveProperty('range');
    }
    expect(internal.hits).toEqual([]);
  });

  it.each([['metadata.google.internal'], ['METADATA.GOOGLE.INTERNAL.'], ['metadata.goog'], ['metadata'], ['Metadata.'], ['instance-data'], ['instance-data.']])(
    'cloud metadata name %s is refused by name, never looked up, on both paths',
    async (name) => {
      for (const render of ['http', 'browser'] as const) {
        const err = await failure(runtime.pages.fetch({ url: `http://${name}:${pub.port}/computeMetadata/v1/`, render }));
        expect(err.code).toBe('blocked_address');
        expect(err.message).toContain('does not resolve to a public address');
      }
      expect(resolver.asked.filter((n) => n.replace(/\.$/, '').toLowerCase() === name.replace(/\.$/, '').toLowerCase())).toEqual([]);
      expect(pub.hits.filter((h) => h.startsWith('/computeMetadata'))).toEqual([]);
    },
  );

  it('a public name is fetched (the stand-in public address)', async () => {
    const page = await runtime.pages.fetch({ url: `http://public.test:${pub.port}/`, render: 'http' });
    expect(page.content).toContain('Paragraph 1 of Public page');
  });

  it.each(['http', 'browser'] as const)('DNS rebinding: an answer that turns internal after the first is caught at connect (%s)', async (render) => {
    const before = resolver.asked.filter((n) => n === 'rebind.test').length;
    if (before === 0) {
      // First answer (public): the fetch goes through.
      const ok = await runtime.pages.fetch({ url: `http://rebind.test:${pub.port}/`, render });
      expect(ok.content).toContain('Public page');
    }
    // The name now answers 127.0.0.1; there is no earlier "check" answer to hide behind: the
    // address that is vetted is the address that is dialled.
    const err = await failure(runtime.pages.fetch({ url: `http://rebind.test:${pub.port}/again`, render }));
    expect(err.code).toBe('blocked_address');
    expect(internal.hits).toEqual([]);
    expect(pub.hits.filter((h) => h === '/again')).toEqual([]);
  });
});

describe('the browser path: every request the page makes passes the guard', () => {
  it('subresources, fetch, beacons, frames and WebSockets aimed at loopback never arrive', async () => {
    const since = Date.now();
    const page = await runtime.pages.fetch({ url: pub.url('/subresources'), render: 'browser' });
    expect(page.content).toContain('subresources and sockets aim at loopback');
    // Give the page's late requests (beacon, sockets) a moment to be attempted.
    await new Promise((r) => setTimeout(r, 300));
    expect(internal.hits).toEqual([]);
    expect(internal.upgrades).toEqual([]);
    const refused = runtime.proxy!.blockedSince(since).map((b) => b.authority);
    expect(refused).toContain(`127.0.0.1:${internal.port}`);
    expect(refused.some((a) => a.startsWith('localhost'))).toBe(true);
  });
});
