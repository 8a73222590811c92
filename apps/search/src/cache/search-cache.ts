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

export interface SearchCache {
  get(key: SearchCacheKey): Promise<CachedSearch | undefined>;
  set(key: SearchCacheKey, value: CachedSearch): Promise<void>;
  close(): Promise<void>;
}

/** The shared search cache in Redis: one string per search, expiring on its own. */
export class RedisSearchCache implements SearchCache {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {
    // A search must not wait on a cache that is down: fail fast, and searches run uncached.
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
    this.redis.on('error', () => undefined);
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
    return `${this.prefix}v1:${createHash('sha256').update(canonical).digest('hex')}`;
  }

  async get(key: SearchCacheKey): Promise<CachedSearch | undefined> {
    const raw = await this.redis.get(this.keyOf(key));
    return raw === null ? undefined : (JSON.parse(raw) as CachedSearch);
  }

  async set(key: SearchCacheKey, value: CachedSearch): Promise<void> {
    if (this.ttlSeconds === 0) return;
    await this.redis.set(this.keyOf(key), JSON.stringify(value), 'EX', this.ttlSeconds);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
