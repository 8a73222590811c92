import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testPrefix } from '@drael/test-support';
import { RedisSearchCache, type CacheEntry, type SearchCacheKey } from '../src/cache/search-cache.js';
import { closedPort, REDIS_URL } from './support.js';

// Two RedisSearchCache instances on one prefix are two replicas of the search service; `admin` is
// something else writing to Redis (it never announces), which is how the tests see whether a
// lookup went to Redis or was answered "miss" by the key index.
const TTL_S = 600;
let admin: Redis;
let prefix: string;
const caches: RedisSearchCache[] = [];

beforeAll(() => {
  admin = new Redis(REDIS_URL);
});
afterAll(() => {
  admin.disconnect();
});
afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
});

function replica(options: ConstructorParameters<typeof RedisSearchCache>[3] = {}, url = REDIS_URL): RedisSearchCache {
  const cache = new RedisSearchCache(url, prefix, TTL_S, options);
  caches.push(cache);
  return cache;
}

const key = (query: string): SearchCacheKey => ({ query, limit: 10, onion: false, freshness: null, language: null, verify: false });

function entry(title: string, ttlMs = TTL_S * 1000): CacheEntry {
  const result = { title, url: `https://example.com/${encodeURIComponent(title)}`, snippet: title, source: 'web', engines: ['web'], page_age: null, verified: false };
  return {
    value: { ok: true, found: true, results: [result], degraded: [], coverage: 1, sources_tried: ['web'], intent: 'general' },
    expiresAt: Date.now() + ttlMs,
  };
}

/** Written into Redis the way RedisSearchCache stores it, but without announcing it. */
async function writeUnannounced(cache: RedisSearchCache, query: string, title: string): Promise<CacheEntry> {
  const e = entry(title);
  await admin.set(cache.keyOf(key(query)), JSON.stringify(e), 'PX', TTL_S * 1000);
  return e;
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function killClient(name: string): Promise<void> {
  const list = (await admin.client('LIST')) as string;
  const line = list.split('\n').find((l) => l.includes(` name=${name} `));
  if (!line) throw new Error(`no Redis client named ${name}`);
  await admin.client('KILL', 'ID', /\bid=(\d+)/.exec(line)![1]!);
}

describe('RedisSearchCache key index (two replicas on one prefix, real Redis)', () => {
  beforeAll(() => {
    prefix = `test:${testPrefix('search-cache')}:`;
  });

  it('a replica learns another replica’s write and answers it; a replica started later finds it by scanning', async () => {
    const a = replica();
    const b = replica();
    await until('both indexes ready', () => a.indexReady && b.indexReady);
    const written = entry('shared answer');
    await a.set(key('shared answer'), written);
    await until('b sees a’s write', async () => (await b.get(key('Shared  Answer'))) !== undefined);
    expect((await b.get(key('shared answer')))?.value).toEqual(written.value);

    const later = replica();
    await until('the later index ready', () => later.indexReady);
    expect((await later.get(key('shared answer')))?.value).toEqual(written.value);
  });

  it('once ready, a key nobody announced is a miss without asking Redis; while the index is down, Redis is asked', async () => {
    const a = replica({ subscriberReconnectMs: 1_500 });
    await until('index ready', () => a.indexReady);

    const skipped = await writeUnannounced(a, 'written behind its back', 'skipped');
    expect(await admin.exists(a.keyOf(key('written behind its back')))).toBe(1);
    expect(await a.get(key('written behind its back'))).toBeUndefined();

    await killClient(a.subscriberName);
    await until('index down', () => !a.indexReady);
    const whileDown = await writeUnannounced(a, 'written while the index is down', 'asked');
    const unread = await writeUnannounced(a, 'found by the rescan', 'rescanned');
    expect((await a.get(key('written while the index is down')))?.value).toEqual(whileDown.value);
    expect(a.indexReady).toBe(false); // so that answer came from the GET, not from the index

    await until('index ready again', () => a.indexReady, 10_000);
    expect((await a.get(key('found by the rescan')))?.value).toEqual(unread.value);
    expect((await a.get(key('written behind its back')))?.value).toEqual(skipped.value);
    await writeUnannounced(a, 'written after the rescan', 'skipped again');
    expect(await a.get(key('written after the rescan'))).toBeUndefined();
  });

  it('a record is not trusted past its expiry, at the writer and at the replica that heard of it', async () => {
    const a = replica();
    const b = replica();
    await until('both indexes ready', () => a.indexReady && b.indexReady);
    await a.set(key('short lived'), entry('short lived', 300));
    await until('b sees a’s write', async () => (await b.get(key('short lived'))) !== undefined);
    await new Promise((r) => setTimeout(r, 400));
    // Something else puts a long-lived answer under that key without announcing it.
    await writeUnannounced(a, 'short lived', 'long lived');
    expect(await a.get(key('short lived'))).toBeUndefined();
    expect(await b.get(key('short lived'))).toBeUndefined();
    // …and a fresh write is announced and found again.
    const again = entry('short lived again');
    await a.set(key('short lived'), again);
    await until('b sees the new write', async () => (await b.get(key('short lived')))?.value.results[0]?.title === 'short lived again');
  });

  it('the writer answers from its memory at once, the shared copy follows (set resolves once written), a close drops a write still waiting', async () => {
    const a = replica();
    await until('index ready', () => a.indexReady);
    const written = entry('written after the reply');
    const writing = a.set(key('written after the reply'), written);
    expect((await a.get(key('written after the reply')))?.value).toEqual(written.value);
    await writing;
    expect(await admin.exists(a.keyOf(key('written after the reply')))).toBe(1);

    const dropped = a.set(key('never shared'), entry('never shared'));
    await a.close();
    await dropped;
    expect(await admin.exists(a.keyOf(key('never shared')))).toBe(0);
  });

  it('Redis down: the index never becomes ready, a lookup fails fast (the service then searches uncached)', async () => {
    const down = replica({}, `redis://127.0.0.1:${await closedPort()}`);
    const started = performance.now();
    await expect(down.get(key('anything'))).rejects.toThrow();
    await expect(down.set(key('anything'), entry('anything'))).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(down.indexReady).toBe(false);
  });
});
