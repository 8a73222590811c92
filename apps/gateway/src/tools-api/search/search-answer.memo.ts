import type { Freshness, SearchQueryReply } from '@drael/contracts';

type Answer = Extract<SearchQueryReply, { ok: true }>;

/** What a /v1/tools/search request asks for, as sent to search.query.v1. */
export interface MemoKey {
  query: string;
  limit: number;
  freshness?: Freshness;
  onion?: boolean;
}

// Enough for the hot searches of one replica; each entry is one reply of at most 20 results.
const DEFAULT_ENTRIES = 1000;

/**
 * This gateway replica's memory of search answers the search service said it has cached.
 *
 * Why here and not a Redis read: the shared cache (Redis, 10 minutes) belongs to the search
 * service. Its key (the normalised query, every parameter that changes results, whether
 * verification ran) and its rule that ok:false is never cached live there only, and no service
 * reads another's keys (ARCHITECTURE.md). What the NATS hop costs on a cached search is most of
 * the time (bench/search), so the gateway keeps, for each request it has seen, the answer the
 * service marked as cached, for as long as the service says the shared cache still holds it
 * (`cache_ttl_ms`) and no longer. A repeat at this replica is then answered `cached: true` without
 * leaving the process; the first repeat at another replica still finds the shared cache through
 * the service.
 *
 * The key is the request exactly as sent: the memo never decides that two different queries are
 * the same search (that rule is the service's), so at worst it misses and the service answers.
 */
export class SearchAnswerMemo {
  private readonly entries = new Map<string, { answer: Answer; expiresAt: number }>();

  constructor(
    private readonly maxEntries = DEFAULT_ENTRIES,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(key: MemoKey): Answer | undefined {
    const k = keyOf(key);
    const entry = this.entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(k);
      return undefined;
    }
    return entry.answer;
  }

  /**
   * Keeps an answer the service says is cached for `cache_ttl_ms` more, counted from `askedAt`
   * (when the request left), so the memo never outlives the shared cache entry. Failures and
   * answers the service did not cache carry no `cache_ttl_ms` and are not kept.
   */
  remember(key: MemoKey, reply: SearchQueryReply, askedAt: number): void {
    if (!reply.ok || !reply.cache_ttl_ms) return;
    const expiresAt = askedAt + reply.cache_ttl_ms;
    if (expiresAt <= this.now()) return;
    const k = keyOf(key);
    this.entries.delete(k);
    if (this.entries.size >= this.maxEntries) {
      // Map keeps insertion order: the oldest entry goes first.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(k, { answer: reply, expiresAt });
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(key: MemoKey): string {
  return JSON.stringify([key.query, key.limit, key.freshness ?? null, key.onion ?? false]);
}
