import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheKeys, closedPort, ok, startSearch, type SearchUnderTest } from './support.js';

// Against the real searx (infra/searx/settings.local.yml) and its fixture corpora: engines
// fixture-web, fixture-news, fixture-flaky in `general`, fixture-onion pinned for onion: true.
const GENERAL = ['fixture-web', 'fixture-news', 'fixture-flaky'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

let search: SearchUnderTest;
beforeAll(async () => {
  search = await startSearch();
});
afterAll(async () => {
  await search?.close();
});

describe('search.query.v1 against searx', () => {
  it('found: results from every general engine, with source, page_age and full coverage', async () => {
    const reply = ok(await search.query({ query: 'drael' }));
    expect(reply.found).toBe(true);
    expect(reply.cached).toBe(false);
    expect(reply.coverage).toBe(1);
    expect(reply.degraded).toEqual([]);
    expect([...reply.sources_tried].sort()).toEqual([...GENERAL].sort());
    const urls = reply.results.map((r) => r.url);
    expect(urls).toContain('http://127.0.0.1:8891/pages/drael-architecture');
    expect(urls).toContain('http://127.0.0.1:8891/pages/drael-news');
    expect(urls).toContain('http://127.0.0.1:8891/pages/drael-flaky');
    for (const r of reply.results) {
      expect(reply.sources_tried).toContain(r.source);
      expect(r.verified).toBe(false); // verification is off in this process
    }
    const arch = reply.results.find((r) => r.url.endsWith('/drael-architecture'))!;
    expect(arch).toMatchObject({ title: 'Drael gateway architecture', source: 'fixture-web', snippet: expect.stringContaining('server side tools') });
    expect(arch.page_age).toMatch(DATE);
    expect(reply.results.find((r) => r.url === 'http://127.0.0.1:9/gone')!.page_age).toBeNull();
  });

  it('empty: every engine answered with nothing → ok, found:false and a note, never a failure', async () => {
    const reply = ok(await search.query({ query: 'zzempty nothing matches this' }));
    expect(reply).toMatchObject({ found: false, results: [], coverage: 1, degraded: [] });
    expect(reply.note).toMatch(/all 3 engine\(s\) were queried and answered; the corpus holds nothing/);
  });

  it('partly failed: results plus the failed engine in degraded and coverage 2/3', async () => {
    const reply = ok(await search.query({ query: 'drael zzfail-flaky' }));
    expect(reply.found).toBe(true);
    expect(reply.degraded).toEqual(['fixture-flaky']);
    expect(reply.coverage).toBeCloseTo(2 / 3, 2);
    expect(reply.results.map((r) => r.source)).not.toContain('fixture-flaky');
    expect(reply.results.length).toBeGreaterThan(0);
  });

  it('partly failed and empty: found:false names the failed engine', async () => {
    const reply = ok(await search.query({ query: 'zzempty zzfail-flaky' }));
    expect(reply).toMatchObject({ found: false, degraded: ['fixture-flaky'] });
    expect(reply.note).toMatch(/2 of 3 engine\(s\) answered.*fixture-flaky failed/);
  });

  it('the failing engine is reported on every query, never silently suspended', async () => {
    for (let i = 0; i < 3; i++) {
      expect(ok(await search.query({ query: `drael zzfail-flaky round${i}` })).degraded).toEqual(['fixture-flaky']);
    }
    // and it answers again at once when it stops failing
    expect(ok(await search.query({ query: 'drael flaky fixture engine' })).degraded).toEqual([]);
  });

  it('all failed: ok:false with why, and never cached', async () => {
    const query = 'drael zzfail-all';
    const first = await search.query({ query });
    expect(first).toMatchObject({ ok: false, code: 'all_engines_failed' });
    if (first.ok) return;
    expect([...first.degraded].sort()).toEqual([...GENERAL].sort());
    expect(first.reason).toMatch(/every engine failed.*fixture-web: HTTP error/);
    const second = await search.query({ query });
    expect(second.ok).toBe(false);
  });

  describe('limit', () => {
    it('defaults to 10', async () => {
      expect(ok(await search.query({ query: 'zzbulk' })).results).toHaveLength(10);
    });
    it('honours 1 and 20', async () => {
      expect(ok(await search.query({ query: 'zzbulk', limit: 1 })).results).toHaveLength(1);
      expect(ok(await search.query({ query: 'zzbulk', limit: 20 })).results).toHaveLength(20);
    });
    it('refuses 0, 21 and a non-integer', async () => {
      for (const limit of [0, 21, 2.5, '5']) {
        const err = await search.error({ query: 'zzbulk', limit });
        expect(err.code).toBe('bad_request');
        expect(err.details?.param).toBe('limit');
      }
    });
  });

  describe('freshness', () => {
    it('maps day|week|month|year to the engines time range', async () => {
      const ages = async (freshness?: 'day' | 'week' | 'month' | 'year') =>
        ok(await search.query({ query: 'zzfresh', freshness }))
          .results.map((r) => r.title.replace('zzfresh story from ', ''))
          .sort();
      expect(await ages('day')).toEqual(['this hour']);
      expect(await ages('week')).toEqual(['this hour', 'this week']);
      expect(await ages('month')).toEqual(['this hour', 'this month', 'this week']);
      expect(await ages('year')).toEqual(['this hour', 'this month', 'this week', 'this year']);
      expect(await ages()).toHaveLength(5);
    });
    it('refuses an unknown freshness', async () => {
      expect((await search.error({ query: 'zzfresh', freshness: 'decade' })).code).toBe('bad_request');
    });
  });

  describe('onion', () => {
    it('asks only the pinned onion engine and keeps only .onion hosts', async () => {
      const reply = ok(await search.query({ query: 'zzhidden', onion: true }));
      expect(reply.sources_tried).toEqual(['fixture-onion']);
      expect(reply.results).toHaveLength(2);
      for (const r of reply.results) expect(new URL(r.url).hostname).toMatch(/\.onion$/);
      expect(reply.results.map((r) => r.url)).not.toContain('https://clear-web.example.com/zzhidden');
    });
    it('the clear web never asks the onion engine', async () => {
      const reply = ok(await search.query({ query: 'zzhidden' }));
      expect(reply.found).toBe(false);
      expect(reply.sources_tried).not.toContain('fixture-onion');
    });
    it('onion is its own cache entry', async () => {
      ok(await search.query({ query: 'zzhidden second', onion: true }));
      expect(ok(await search.query({ query: 'zzhidden second' })).found).toBe(false);
    });
  });

  describe('cache', () => {
    it('miss then hit, keyed by the normalised query', async () => {
      const miss = ok(await search.query({ query: 'Drael gateway architecture', limit: 3 }));
      expect(miss.cached).toBe(false);
      const hit = ok(await search.query({ query: '  drael   GATEWAY architecture ', limit: 3 }));
      expect(hit.cached).toBe(true);
      expect(hit.results).toEqual(miss.results);
      expect(hit.sources_tried).toEqual(miss.sources_tried);
    });
    it('says how long SearXNG took (searx_ms) when it was asked, and not for a cached answer', async () => {
      const miss = ok(await search.query({ query: 'drael searx ms', limit: 2 }));
      expect(miss.searx_ms).toEqual(expect.any(Number));
      expect(miss.searx_ms!).toBeGreaterThan(0);
      expect(miss.searx_ms!).toBeLessThanOrEqual(miss.took_ms);
      const hit = ok(await search.query({ query: 'drael searx ms', limit: 2 }));
      expect(hit.cached).toBe(true);
      expect('searx_ms' in hit).toBe(false);
    });
    it('every result-changing parameter is part of the key', async () => {
      ok(await search.query({ query: 'drael news', limit: 3 }));
      expect(ok(await search.query({ query: 'drael news', limit: 3 })).cached).toBe(true);
      expect(ok(await search.query({ query: 'drael news', limit: 4 })).cached).toBe(false);
      expect(ok(await search.query({ query: 'drael news', limit: 3, freshness: 'year' })).cached).toBe(false);
      expect(ok(await search.query({ query: 'drael news', limit: 3, language: 'de' })).cached).toBe(false);
    });
    it('an empty answer is cached (it is an answer); a failure never is', async () => {
      // Each count waits until the shared writes of the answers before it have landed (cacheKeys).
      const start = (await cacheKeys(search.cachePrefix)).length;
      ok(await search.query({ query: 'zzempty cached' }));
      expect(ok(await search.query({ query: 'zzempty cached' })).cached).toBe(true);
      expect((await cacheKeys(search.cachePrefix)).length).toBe(start + 1);
      await search.query({ query: 'zzfail-all cache me not' });
      await search.query({ query: 'zzfail-all cache me not' });
      expect((await cacheKeys(search.cachePrefix)).length).toBe(start + 1);
    });
    it('says how much longer the shared cache holds an answer (cache_ttl_ms), never for a failure', async () => {
      const miss = ok(await search.query({ query: 'drael cache ttl ms' }));
      expect(miss.cached).toBe(false);
      expect(miss.cache_ttl_ms).toBe(600_000);
      const hit = ok(await search.query({ query: 'drael cache ttl ms' }));
      expect(hit.cached).toBe(true);
      expect(hit.cache_ttl_ms).toBeGreaterThan(500_000);
      expect(hit.cache_ttl_ms).toBeLessThanOrEqual(600_000);
      const failed = await search.query({ query: 'zzfail-all no ttl' });
      expect(failed.ok).toBe(false);
      expect('cache_ttl_ms' in failed).toBe(false);
    });
    it('entries expire after 10 minutes', async () => {
      ok(await search.query({ query: 'drael ttl check' }));
      const { Redis } = await import('ioredis');
      const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
      try {
        // the write is not waited for by the reply: give it a moment to land
        let keys: string[] = [];
        for (let i = 0; i < 50 && keys.length === 0; i++) {
          keys = await redis.keys(`${search.cachePrefix}*`);
          if (keys.length === 0) await new Promise((r) => setTimeout(r, 50));
        }
        expect(keys.length).toBeGreaterThan(0);
        for (const k of keys) {
          const ttl = await redis.ttl(k);
          expect(ttl).toBeGreaterThan(500);
          expect(ttl).toBeLessThanOrEqual(600);
        }
      } finally {
        redis.disconnect();
      }
    });
  });

  it('the cache is shared: another replica answers from it', async () => {
    const first = ok(await search.query({ query: 'drael shared cache', limit: 2 }));
    expect(first.cached).toBe(false);
    const replica = await startSearch({ SEARCH_CACHE_PREFIX: search.cachePrefix });
    try {
      let again = ok(await replica.query({ query: 'drael shared cache', limit: 2 }));
      // the first replica's write is not waited for by its reply: allow it a moment
      for (let i = 0; i < 20 && !again.cached; i++) {
        await new Promise((r) => setTimeout(r, 50));
        again = ok(await replica.query({ query: 'drael shared cache', limit: 2 }));
      }
      expect(again.cached).toBe(true);
      expect(again.results).toEqual(first.results);
    } finally {
      await replica.close();
    }
  });

  describe('bad input', () => {
    it.each([
      ['empty query', { query: '' }],
      ['blank query', { query: '   ' }],
      ['10 KB query', { query: 'x'.repeat(10 * 1024) }],
      ['query of the wrong type', { query: 42 }],
      ['onion of the wrong type', { query: 'x', onion: 'yes' }],
      ['no query', {}],
    ])('%s → bad_request', async (_name, payload) => {
      expect((await search.error(payload)).code).toBe('bad_request');
    });
  });
});

describe('search.query.v1 when things are missing', () => {
  let bare: SearchUnderTest;
  let misconfigured: SearchUnderTest;
  beforeAll(async () => {
    // searx "down": nothing listens on that port. No onion engine pinned.
    bare = await startSearch({ SEARXNG_URL: `http://127.0.0.1:${await closedPort()}`, SEARCH_ONION_ENGINES: '' });
    misconfigured = await startSearch({ SEARCH_ONION_ENGINES: 'no-such-onion-engine' });
  });
  afterAll(async () => {
    await bare?.close();
    await misconfigured?.close();
  });

  it('SearXNG down → ok:false searx_unreachable, never cached', async () => {
    const reply = await bare.query({ query: 'drael' });
    expect(reply).toMatchObject({ ok: false, code: 'searx_unreachable', reason: expect.stringMatching(/unreachable: ECONNREFUSED/) });
    expect(await cacheKeys(bare.cachePrefix)).toEqual([]);
  });

  it('onion without a pinned onion engine → onion_search_unavailable, never the clear web', async () => {
    const err = await bare.error({ query: 'drael', onion: true });
    expect(err.code).toBe('onion_search_unavailable');
  });

  it('onion with a pinned engine searx does not have → onion_search_unavailable (searx would fall back silently)', async () => {
    const err = await misconfigured.error({ query: 'drael', onion: true });
    expect(err.code).toBe('onion_search_unavailable');
    expect(err.message).toMatch(/no-such-onion-engine/);
    // the clear web still works on the same service
    expect(ok(await misconfigured.query({ query: 'drael' })).found).toBe(true);
  });
});

describe('search.query.v1 with Redis down', () => {
  let noRedis: SearchUnderTest;
  beforeAll(async () => {
    noRedis = await startSearch({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
  });
  afterAll(async () => {
    await noRedis?.close();
  });

  it('searches run uncached (apart from the memory in front of Redis), they do not fail', async () => {
    const first = ok(await noRedis.query({ query: 'drael', limit: 3 }));
    expect(first).toMatchObject({ found: true, cached: false });
    expect(ok(await noRedis.query({ query: 'drael', limit: 4 })).cached).toBe(false);
    expect(noRedis.process.output()).toMatch(/search cache unavailable; searching uncached/);
  });
});

describe('search.query.v1 with the cache turned off (SEARCH_CACHE_TTL_S=0)', () => {
  let uncached: SearchUnderTest;
  beforeAll(async () => {
    uncached = await startSearch({ SEARCH_CACHE_TTL_S: '0' });
  });
  afterAll(async () => {
    await uncached?.close();
  });

  it('answers every time from SearXNG and promises no cache lifetime', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = ok(await uncached.query({ query: 'drael no cache' }));
      expect(answer.cached).toBe(false);
      expect(answer.cache_ttl_ms).toBeUndefined();
    }
    expect(await cacheKeys(uncached.cachePrefix)).toEqual([]);
  });
});
