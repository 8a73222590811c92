import { hash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Freshness, SearchQueryReply } from '@drael/contracts';
import { KeyIndex } from './key-index.js';

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
  // NFKC leaves ASCII as it is: most queries skip the call into ICU on every search's path.
  const composed = NON_ASCII.test(query) ? query.normalize('NFKC') : query;
  return composed.trim().replace(/\s+/g, ' ').toLowerCase();
}
const NON_ASCII = /[^\u0000-\u007f]/;

/** One cached answer and when the shared cache lets it go. */
export interface CacheEntry {
  value: CachedSearch;
  /** epoch ms */
  expiresAt: number;
}

export interface SearchCache {
  /** How long a new entry lives, in ms; 0: nothing is cached. */
  readonly ttlMs: number;
  /**
   * The cached answer. Without a promise when this replica can tell on its own (its memory has the
   * answer, or its key index says no replica wrote one): the lookup is on every search's path.
   */
  get(key: SearchCacheKey): CacheEntry | undefined | Promise<CacheEntry | undefined>;
  set(key: SearchCacheKey, entry: CacheEntry): Promise<void>;
  close(): Promise<void>;
}

// Hot searches are answered from this process's memory, in front of Redis: one process hop less on
// the cached path (spec target: cached ≤ 2 ms at the gateway). Entries keep the absolute expiry
// they have in Redis, so no replica serves an answer longer than the shared cache would.
const MEMORY_ENTRIES = 1000;

// The key index (README "Cache") holds one record per search cached by any replica in the last
// TTL: at 10 minutes, 50 000 keys is ~83 new searches a second across all replicas, a few MB here.
// Past it, every lookup asks Redis again, as without the index.
const INDEX_MAX_KEYS = 50_000;
// Expired records are dropped this often; a lookup never trusts one past its expiry anyway.
const INDEX_PRUNE_MS = 60_000;
// A scan that failed (the command connection down while the subscriber is up) is tried again after this.
const INDEX_RESCAN_MS = 1_000;
const SCAN_BATCH = 1_000;
// The shared write (SET, then the announcement every replica hears, this one included) waits this
// long after the answer is made: the reply it belongs to is still on its way through nats-server,
// the gateway and the client, and on a small machine a Redis round trip and each replica's wake-up
// for the announcement were taking CPU from it (bench/search/README.md, issue 20). This replica's
// memory and key index have the entry at once; another replica asked for the same search within
// this window searches it again, which costs a SearXNG query, never a wrong answer.
const SHARED_WRITE_DELAY_MS = 10;

export interface RedisSearchCacheOptions {
  /** Delay before the announcement subscriber reconnects (ioredis's back-off when absent). */
  subscriberReconnectMs?: number;
}

/**
 * The shared search cache in Redis (one string per search, expiring on its own), with a small
 * memory front and an index of the keys Redis may hold, so a search that no replica has cached
 * skips the Redis GET.
 */
export class RedisSearchCache implements SearchCache {
  private readonly redis: Redis;
  private readonly memory = new Map<string, CacheEntry>();
  /** Receives every replica's announcements; named so an operator (or a test) can find it. */
  private readonly subscriber: Redis;
  readonly subscriberName: string;
  private readonly channel: string;
  private readonly index = new KeyIndex(INDEX_MAX_KEYS);
  /** Bumped whenever the index is rebuilt or its subscriber drops: a scan of an older epoch stops. */
  private epoch = 0;
  private readonly pruneTimer: NodeJS.Timeout;
  private rescanTimer?: NodeJS.Timeout;
  private closed = false;
  /** Shared writes waiting out SHARED_WRITE_DELAY_MS, each with the settle of its set() promise. */
  private readonly pendingWrites = new Map<NodeJS.Timeout, () => void>();

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    options: RedisSearchCacheOptions = {},
  ) {
    // A search must not wait on a cache that is down: fail fast, and searches run uncached.
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
    this.redis.on('error', () => undefined);

    this.channel = `${prefix}v2:written`;
    // CLIENT SETNAME takes no spaces; the prefix is an operator's string.
    this.subscriberName = `search-cache-index:${prefix.replace(/\s/g, '_')}:${randomUUID()}`;
    const reconnectMs = options.subscriberReconnectMs;
    this.subscriber = this.redis.duplicate({
      connectionName: this.subscriberName,
      // Subscribing again is done by hand on every 'ready', followed by the scan, in that order.
      autoResubscribe: false,
      ...(reconnectMs !== undefined ? { retryStrategy: () => reconnectMs } : {}),
    });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('ready', () => void this.rebuildIndex());
    this.subscriber.on('close', () => this.indexLost());
    // The subscriber can be up before the command connection the scan runs on: scan once that is up.
    this.redis.on('ready', () => {
      if (this.rescanTimer && this.subscriber.status === 'ready') void this.rebuildIndex();
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.onAnnouncement(message);
    });

    this.pruneTimer = setInterval(() => {
      this.index.prune(Date.now());
      if (this.index.overflowed && this.subscriber.status === 'ready') void this.rebuildIndex();
    }, INDEX_PRUNE_MS);
    this.pruneTimer.unref();
  }

  get ttlMs(): number {
    return this.ttlSeconds * 1000;
  }

  /** True while lookups of keys it lacks skip Redis (subscribed, scanned, under the cap). */
  get indexReady(): boolean {
    return this.index.ready;
  }

  keyOf(key: SearchCacheKey): string {
    const canonical = JSON.stringify([normaliseQuery(key.query), key.limit, key.onion, key.freshness, key.language?.toLowerCase() ?? null, key.verify]);
    // One-shot hash: no Hash object per query (a third of createHash's cost).
    return `${this.prefix}v2:${hash('sha256', canonical, 'hex')}`;
  }

  get(key: SearchCacheKey): CacheEntry | undefined | Promise<CacheEntry | undefined> {
    const k = this.keyOf(key);
    const now = Date.now();
    const near = this.memory.get(k);
    if (near && near.expiresAt > now) return near;
    if (near) this.memory.delete(k);
    // No replica wrote this key within its lifetime (or the index is not trusted right now).
    if (!this.index.mayHold(k, now)) return undefined;
    return this.getShared(k, now);
  }

  private async getShared(k: string, now: number): Promise<CacheEntry | undefined> {
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
    // Recorded before the write lands: "may hold" only costs a GET if the write then fails.
    this.index.record(k, entry.expiresAt);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingWrites.delete(timer);
        this.writeShared(k, entry).then(resolve, reject);
      }, SHARED_WRITE_DELAY_MS);
      this.pendingWrites.set(timer, resolve);
    });
  }

  private async writeShared(k: string, entry: CacheEntry): Promise<void> {
    // The lifetime left when the write is sent (the entry may have aged while it waited).
    const ttlMs = entry.expiresAt - Date.now();
    if (ttlMs <= 0 || this.closed) return;
    // The announcement follows the SET on the same connection, so Redis has the key by the time
    // another replica hears of it. It carries the lifetime, not the expiry: each replica adds it to
    // its own clock on receipt, which is never earlier than the real expiry.
    await Promise.all([this.redis.set(k, JSON.stringify(entry), 'PX', ttlMs), this.redis.publish(this.channel, `${ttlMs} ${k}`)]);
  }

  /** Health: the cache's Redis answers PING (searches run uncached while it does not). */
  async ping(): Promise<void> {
    if (this.redis.status !== 'ready') throw new Error(`redis connection ${this.redis.status}`);
    await this.redis.ping();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.epoch++;
    // Writes still waiting are dropped: the shared cache only spares SearXNG queries.
    for (const [timer, settle] of this.pendingWrites) {
      clearTimeout(timer);
      settle();
    }
    this.pendingWrites.clear();
    clearInterval(this.pruneTimer);
    clearTimeout(this.rescanTimer);
    this.subscriber.disconnect();
    this.redis.disconnect();
  }

  private onAnnouncement(message: string): void {
    const space = message.indexOf(' ');
    const ttlMs = Number(message.slice(0, space));
    const k = message.slice(space + 1);
    if (space <= 0 || !Number.isFinite(ttlMs) || !k.startsWith(`${this.prefix}v2:`)) return;
    this.index.record(k, Date.now() + ttlMs);
  }

  /**
   * Subscribe first, then scan: a key written before the subscription took effect is in Redis for
   * the whole scan (or expired), so the scan sees it; one written after is announced to us.
   */
  private async rebuildIndex(): Promise<void> {
    if (this.closed) return;
    const epoch = ++this.epoch;
    clearTimeout(this.rescanTimer);
    this.rescanTimer = undefined;
    this.index.reset();
    try {
      await this.subscriber.subscribe(this.channel);
      const pattern = `${escapeGlob(this.prefix)}v2:*`;
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH);
        if (epoch !== this.epoch) return;
        // The scan cannot tell when a key expires without one more call per key; the TTL every
        // replica writes with is the latest it can (a replica configured longer costs a miss, not a wrong answer).
        const until = Date.now() + this.ttlMs;
        for (const k of keys) this.index.record(k, until);
        if (this.index.overflowed) return;
        cursor = next;
      } while (cursor !== '0');
      if (epoch === this.epoch) this.index.markReady();
    } catch {
      // The command connection is down (or the subscriber dropped): lookups ask Redis; try again.
      if (epoch !== this.epoch || this.closed) return;
      this.rescanTimer = setTimeout(() => {
        this.rescanTimer = undefined;
        if (this.subscriber.status === 'ready') void this.rebuildIndex();
      }, INDEX_RESCAN_MS);
      this.rescanTimer.unref();
    }
  }

  /** Announcements may have been missed while disconnected: nothing is trusted until the next rebuild. */
  private indexLost(): void {
    this.epoch++;
    clearTimeout(this.rescanTimer);
    this.rescanTimer = undefined;
    this.index.reset();
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

/** SCAN's MATCH reads * ? [ ] and backslash as glob syntax; the prefix is literal. */
function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}
