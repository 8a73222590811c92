import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '@drael/test-support';
import { FIXTURE_URL, NATS_URL, ok, REDIS_URL, startSearch, type SearchUnderTest } from './support.js';

// Snippet verification through the REAL fetch service (fetch.page.v1) over the fixture pages that
// infra/searx/fixture-server serves on 127.0.0.1 (fetch's test-only allow knob lets it read them).
let search: SearchUnderTest;
let fetchService: ServiceProcess;
let noFetch: SearchUnderTest;

beforeAll(async () => {
  search = await startSearch({ SEARCH_VERIFY: 'true', SEARCH_VERIFY_BUDGET_MS: '8000' });
  fetchService = await startServiceProcess('fetch', {
    NATS_URL,
    DRAEL_NATS_PREFIX: search.prefix,
    REDIS_URL,
    FETCH_CACHE_PREFIX: `test:${search.prefix}:fetch:`,
    FETCH_TEST_ALLOW_CIDRS: '127.0.0.1/32',
    FETCH_BROWSER: 'off',
    TOR_SOCKS_URL: '',
  });
  // verification on, but no fetch service answers on its prefix
  noFetch = await startSearch({ SEARCH_VERIFY: 'true' });
});

afterAll(async () => {
  await fetchService?.stop();
  await search?.close();
  await noFetch?.close();
});

describe('snippet verification', () => {
  it('present → verified:true; absent → dropped; page unreachable → kept, verified:false', async () => {
    const reply = ok(await search.query({ query: 'drael', limit: 10 }));
    const byUrl = new Map(reply.results.map((r) => [r.url, r]));
    // the snippet is on the live page
    expect(byUrl.get(`${FIXTURE_URL}/pages/drael-architecture`)?.verified).toBe(true);
    expect(byUrl.get(`${FIXTURE_URL}/pages/drael-news`)?.verified).toBe(true);
    // the live page no longer holds the snippet: not returned at all
    expect(byUrl.has(`${FIXTURE_URL}/pages/stale-snippet`)).toBe(false);
    // nothing answers on that port: kept, but not claimed verified
    expect(byUrl.get('http://127.0.0.1:9/gone')?.verified).toBe(false);
  });

  it('a dropped result makes room for the next one within the limit', async () => {
    const reply = ok(await search.query({ query: 'drael', limit: 3 }));
    expect(reply.results).toHaveLength(3);
    expect(reply.results.map((r) => r.url)).not.toContain(`${FIXTURE_URL}/pages/stale-snippet`);
  });

  it('verify:false skips it (and is its own cache entry)', async () => {
    const reply = ok(await search.query({ query: 'drael', limit: 10, verify: false }));
    expect(reply.cached).toBe(false);
    expect(reply.results.every((r) => !r.verified)).toBe(true);
    expect(reply.results.map((r) => r.url)).toContain(`${FIXTURE_URL}/pages/stale-snippet`);
  });

  it('fetch service down → every result kept with verified:false', async () => {
    const reply = ok(await noFetch.query({ query: 'drael', limit: 10 }));
    expect(reply.results.length).toBeGreaterThan(0);
    expect(reply.results.every((r) => !r.verified)).toBe(true);
  });
});
