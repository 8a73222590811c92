/**
 * A small TTL cache for key verification results, bounded in size (Map keeps insertion order, so
 * the first entry is the oldest). Keys are cached by the sha256 of the API key, never the key.
 */
export class KeyCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(id: string): V | undefined {
    const e = this.entries.get(id);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(id);
      return undefined;
    }
    return e.value;
  }

  /** Drops every entry whose value matches; how many went. */
  deleteWhere(matches: (value: V) => boolean): number {
    let dropped = 0;
    for (const [id, e] of this.entries) {
      if (!matches(e.value)) continue;
      this.entries.delete(id);
      dropped++;
    }
    return dropped;
  }

  /** Keeps the value for the cache's TTL, or for `ttlMs` when that is shorter (nothing kept at 0 or less). */
  set(id: string, value: V, ttlMs = this.ttlMs): void {
    const keptMs = Math.min(ttlMs, this.ttlMs);
    if (keptMs <= 0) return;
    this.entries.delete(id);
    this.entries.set(id, { value, expiresAt: this.now() + keptMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
