import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleValue } from '@drael/metrics';
import { freePort, scrapeMetrics } from '@drael/test-support';
import { ok, startSearch, type SearchUnderTest } from './support.js';

// Issue 18: the search service's /metrics (on its health port) after real queries against the
// real searx and its fixture corpora (infra/searx/settings.local.yml): fixture-web, fixture-news
// and fixture-flaky answer `general`; a query with zzfail-flaky makes fixture-flaky fail, one
// with zzfail-all makes every engine fail, zzempty matches nothing. Each query is new to the
// cache (a fresh zznonce- word), so each is a miss unless the test repeats it.

let search: SearchUnderTest;
let base = '';
// The fixture corpora ignore `zznonce-` words: a fresh one makes a query new to the cache without changing its results.
const fresh = () => `zznonce-${randomBytes(4).toString('hex')}`;

/** Scrapes before and after `act`, and reads how far one series moved. */
async function delta(act: () => Promise<void>) {
  const before = await scrapeMetrics(base);
  await act();
  const after = await scrapeMetrics(base);
  return (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  search = await startSearch({ HEALTH_PORT: String(port) });
});
afterAll(async () => {
  await search?.close();
});

describe('search metrics after real queries', () => {
  it('found, then the same query from the cache: outcomes, cache lookups and SearXNG calls counted exactly', async () => {
    const query = `drael ${fresh()}`;
    const first = await delta(async () => {
      expect(ok(await search.query({ query })).found).toBe(true);
    });
    expect(first('drael_search_query_duration_seconds_count', { outcome: 'found' })).toBe(1);
    expect(first('drael_search_query_duration_seconds_count')).toBe(1);
    expect(first('drael_search_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(first('drael_search_cache_lookups_total', { result: 'hit' })).toBe(0);
    expect(first('drael_search_searxng_duration_seconds_count')).toBe(1);
    expect(first('drael_search_searxng_duration_seconds_sum')).toBeGreaterThan(0);
    expect(first('drael_search_engine_failures_total')).toBe(0);
    expect(first('drael_rpc_handler_duration_seconds_count', { subject: 'search.query.v1', outcome: 'ok' })).toBe(1);

    const again = await delta(async () => {
      expect(ok(await search.query({ query })).cached).toBe(true);
    });
    expect(again('drael_search_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(again('drael_search_cache_lookups_total', { result: 'miss' })).toBe(0);
    expect(again('drael_search_query_duration_seconds_count', { outcome: 'found' })).toBe(1);
    expect(again('drael_search_searxng_duration_seconds_count')).toBe(0);
  });

  it('one engine failing: the query is degraded, the engine counted by name', async () => {
    const d = await delta(async () => {
      expect(ok(await search.query({ query: `drael zzfail-flaky ${fresh()}` })).degraded).toEqual(['fixture-flaky']);
    });
    expect(d('drael_search_query_duration_seconds_count', { outcome: 'degraded' })).toBe(1);
    expect(d('drael_search_engine_failures_total', { engine: 'fixture-flaky' })).toBe(1);
    expect(d('drael_search_engine_failures_total')).toBe(1);
  });

  it('every engine failing: failed, each engine counted; nothing matching: empty', async () => {
    const failed = await delta(async () => {
      expect(await search.query({ query: `drael zzfail-all ${fresh()}` })).toMatchObject({ ok: false, code: 'all_engines_failed' });
    });
    expect(failed('drael_search_query_duration_seconds_count', { outcome: 'failed' })).toBe(1);
    for (const engine of ['fixture-web', 'fixture-news', 'fixture-flaky']) expect(failed('drael_search_engine_failures_total', { engine })).toBe(1);

    const empty = await delta(async () => {
      expect(ok(await search.query({ query: `zzempty ${fresh()}` })).found).toBe(false);
    });
    expect(empty('drael_search_query_duration_seconds_count', { outcome: 'empty' })).toBe(1);
    expect(empty('drael_search_query_duration_seconds_count', { outcome: 'found' })).toBe(0);
  });

  it('no query text and no URL is ever a label value', async () => {
    const secret = `drael ${fresh()}`;
    await search.query({ query: secret });
    const text = await scrapeMetrics(base);
    expect(text).not.toContain(secret.split(' ')[1]);
    expect(text).not.toContain('127.0.0.1');
  });
});
