import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, article, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// The shared page cache and the tenants' own browser contexts: a page a tenant's context rendered
// carries what the site keeps for that tenant (its cookies), so it is never served to another
// tenant; a page fetched over HTTP (no cookies) is everyone's.
let site: FixtureServer;
let runtime: FetchRuntime;
let visitors = 0;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    if (req.url === '/favicon.ico') return void res.writeHead(404).end();
    // A site that remembers its visitor by a cookie and greets them by it.
    const known = /visitor=(\d+)/.exec(req.headers.cookie ?? '')?.[1];
    const visitor = known ?? String(++visitors);
    html(res, article(`Private greeting for visitor ${visitor}`, 12), 200, known ? {} : { 'set-cookie': `visitor=${visitor}; Path=/` });
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

describe('the page cache and tenants', () => {
  it("a page a tenant's browser context rendered is cached for that tenant only", async () => {
    const url = site.url('/greeting');
    await runtime.pages.fetch({ url: site.url('/set-cookie'), render: 'browser', tenant: 'tenant-a' });
    const a = await runtime.pages.fetch({ url, render: 'browser', tenant: 'tenant-a' });
    expect(a.cached).toBe(false);
    const aAgain = await runtime.pages.fetch({ url, render: 'browser', tenant: 'tenant-a' });
    expect(aAgain.cached).toBe(true);
    const b = await runtime.pages.fetch({ url, render: 'browser', tenant: 'tenant-b' });
    expect(b.cached).toBe(false);
    const greeting = (content: string) => /Private greeting for visitor \d+/.exec(content)?.[0];
    expect(greeting(b.content)).toBeDefined();
    expect(greeting(b.content)).not.toBe(greeting(a.content));
  });

  it('a page fetched over HTTP is shared by every tenant', async () => {
    const url = site.url('/plain');
    expect((await runtime.pages.fetch({ url, render: 'http', tenant: 'tenant-a' })).cached).toBe(false);
    expect((await runtime.pages.fetch({ url, render: 'http', tenant: 'tenant-b' })).cached).toBe(true);
  });
});
