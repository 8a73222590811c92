import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { FETCH_CACHE_TTL_SECONDS } from '@drael/contracts';
import type { Logger } from '@drael/logger';

/** What is cached: the extracted page before focus and max_chars are applied. */
export interface CachedPage {
  final_url: string;
  title: string | null;
  byline: string | null;
  description: string | null;
  canonical: string | null;
  lang: string | null;
  content_type: string;
  content: string;
}

export interface PageCache {
  get(key: string): Promise<CachedPage | undefined>;
  set(key: string, page: CachedPage): Promise<void>;
  close(): Promise<void>;
}

/**
 * Key: the normalised URL (WHATWG form, no fragment), the focus and the render mode; and the
 * tenant for a page its own browser context rendered (that context keeps the cookies sites set
 * for it, so what it saw is that tenant's page, never another's).
 */
export function cacheKey(normalisedUrl: string, focus: string | undefined, render: string, tenant?: string): string {
  return createHash('sha256')
    .update(JSON.stringify([normalisedUrl, (focus ?? '').trim().toLowerCase(), render, ...(tenant === undefined ? [] : [tenant])]))
    .digest('hex');
}

/**
 * The shared 15-minute cache in Redis. A cache that is down never fails a fetch: it is skipped
 * and logged. Only successes are written (failures are not cached).
 */
export class RedisPageCache implements PageCache {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1_000, connectTimeout: 2_000 });
    this.redis.on('error', () => undefined);
  }

  async get(key: string): Promise<CachedPage | undefined> {
    try {
      const raw = await this.redis.get(this.prefix + key);
      return raw ? (JSON.parse(raw) as CachedPage) : undefined;
    } catch (err) {
      this.logger.warn({ err }, 'fetch cache read failed; fetching without cache');
      return undefined;
    }
  }

  async set(key: string, page: CachedPage): Promise<void> {
    try {
      // spec 04: fetches are cached for 15 minutes.
      await this.redis.set(this.prefix + key, JSON.stringify(page), 'EX', FETCH_CACHE_TTL_SECONDS);
    } catch (err) {
      this.logger.warn({ err }, 'fetch cache write failed');
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
