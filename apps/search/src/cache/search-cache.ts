import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Freshness, SearchQueryReply } from '@drael/contracts';

export type CachedSearch = Omit<Extract<SearchQueryReply, { ok: true }>, 'took_ms' | 'cached'>;

/** Everything that changes what a search returns; two requests with equal keys get equal answers. */
export interface SearchCacheKey {
  query: string;
  limit: number;
  onion: boolean;
  freshness: Freshness | null;
  language: string | null;
  verify: boolean;
}

/** Lower case, NFKC, whitespace collapsed: "  Curs  BNR " and "curs bnr" are one search. */
export function normaliseQuery(query: string): string {
  return query.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** One cached answer and when the shared cache lets it go. */
export interface CacheEntry {
  value: CachedSearch;
  /** epoch ms */
  expiresAt: number;
}

export interface SearchCache {
  /** How long a new entry lives, in ms; 0: nothing is cached. */
  readonly ttlMs: number;
  get(key: SearchCacheKey): Promise<CacheEntry | undefined>;
  set(key: SearchCacheKey, entry: CacheEntry): Promise<void>;
  close(): Promise<void>;
}

// Hot searches are answered from this process's memory, in front of Redis: one process hop less on
// the cached path (spec target: cached ≤ 2 ms at the gateway). Entries keep the absolute expiry
// they have in Redis, so no replica serves an answer longer than the shared cache would.
const MEMORY_ENTRIES = 1000;

/** The shared search cache in Redis (one string per search, expiring on its own), with a small memory front. */
export class RedisSearchCache implements SearchCache {
  private readonly redis: Redis;
  private readonly memory = new Map<string, CacheEntry>();

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {
    // A search must not wait on a cache that is down: fail fast, and searches run uncached.
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
    this.redis.on('error', () => undefined);
  }

  get ttlMs(): number {
    return this.ttlSeconds * 1000;
  }

  keyOf(key: SearchCacheKey): string {
    const canonical = JSON.stringify([
      normaliseQuery(key.query),
      key.limit,
      key.onion,
      key.freshness,
      key.language?.toLowerCase() ?? null,
      key.verify,
    ]);
    return `${this.prefix}v2:${createHash('sha256').update(canonical).digest('hex')}`;
  }

  async get(key: SearchCacheKey): Promise<CacheEntry | undefined> {
    const k = this.keyOf(key);
    const now = Date.now();
    const near = this.memory.get(k);
    if (near && near.expiresAt > now) return near;
    if (near) this.memory.delete(k);
    const raw = await this.redis.get(k);
    if (raw === null) return undefined;
    const stored = JSON.parse(raw) as CacheEntry;
    if (stored.expiresAt <= now) return undefined;
    this.remember(k, stored);
    return stored;
  }

  async set(key: SearchCacheKey, entry: CacheEntry): Promise<void> {
    const ttlMs = entry.expiresAt - Date.now();
    if (this.ttlSeconds === 0 || ttlMs <= 0) return;
    const k = this.keyOf(key);
    this.remember(k, entry);
    await this.redis.set(k, JSON.stringify(entry), 'PX', ttlMs);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private remember(k: string, stored: CacheEntry): void {
    this.memory.delete(k);
    if (this.memory.size >= MEMORY_ENTRIES) {
      // Oldest insertion goes first (Map keeps insertion order).
      const oldest = this.memory.keys().next();
      if (!oldest.done) this.memory.delete(oldest.value);
    }
    this.memory.set(k, stored);
  }
}
