import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, article, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// spec 04: at most 3 redirects, on the browser path as on the HTTP one, and the hop past the
// limit is never requested (not merely refused after Chromium followed the whole chain).
let site: FixtureServer;
let runtime: FetchRuntime;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/favicon.ico') return void res.writeHead(404).end();
    const n = Number(url.searchParams.get('n'));
    const chain = url.searchParams.get('c');
    if (n > 0) res.writeHead(302, { location: `/hops?c=${chain}&n=${n - 1}` }).end();
    else html(res, article('Arrived through the chain', 12));
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

const hitsOf = (chain: string) => site.hits.filter((h) => h.includes(`c=${chain}&`));

describe('browser path redirects', () => {
  it('3 redirects are followed', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/hops?c=three&n=3'), render: 'browser' });
    expect(page.final_url).toBe(site.url('/hops?c=three&n=0'));
    expect(page.content).toContain('Arrived through the chain');
    expect(hitsOf('three')).toEqual(['/hops?c=three&n=3', '/hops?c=three&n=2', '/hops?c=three&n=1', '/hops?c=three&n=0']);
  });

  it('a 4th redirect → too_many_redirects, and the 4th hop is never requested', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/hops?c=four&n=4'), render: 'browser' }));
    expect(err.code).toBe('too_many_redirects');
    expect(hitsOf('four')).toEqual(['/hops?c=four&n=4', '/hops?c=four&n=3', '/hops?c=four&n=2', '/hops?c=four&n=1']);
  });

  it('a long chain stops at the limit too, for a tenant page reused afterwards', async () => {
    const err = await failure(runtime.pages.fetch({ url: site.url('/hops?c=long&n=9'), render: 'browser', tenant: 'redirects' }));
    expect(err.code).toBe('too_many_redirects');
    expect(hitsOf('long')).toHaveLength(4);
    // The same tenant page counts afresh on its next request.
    const page = await runtime.pages.fetch({ url: site.url('/hops?c=again&n=3'), render: 'browser', tenant: 'redirects' });
    expect(page.content).toContain('Arrived through the chain');
  });
});
