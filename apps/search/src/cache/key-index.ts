/**
 * Which keys the shared cache may hold, and until when at the latest: a replica's reason to skip
 * the Redis GET for a key it knows is not there. It only ever answers "not there" or "maybe";
 * "maybe" means "ask Redis". Trusted only while `ready` (RedisSearchCache decides when: subscribed
 * to the announcements and the scan of the prefix done).
 */
export class KeyIndex {
  private readonly until = new Map<string, number>();
  private state: 'building' | 'ready' | 'overflow' = 'building';

  /** `cap`: past this many keys the index stops recording and is not trusted until rebuilt. */
  constructor(private readonly cap: number) {}

  get ready(): boolean {
    return this.state === 'ready';
  }

  get overflowed(): boolean {
    return this.state === 'overflow';
  }

  get size(): number {
    return this.until.size;
  }

  /** Start over (after a reconnect, or to leave overflow): nothing is trusted until `markReady`. */
  reset(): void {
    this.until.clear();
    this.state = 'building';
  }

  markReady(): void {
    if (this.state === 'building') this.state = 'ready';
  }

  /** The key may be in the shared cache until `expiresAt` (epoch ms); the later of two records wins. */
  record(key: string, expiresAt: number): void {
    if (this.state === 'overflow') return;
    const known = this.until.get(key);
    if (known !== undefined && known >= expiresAt) return;
    this.until.set(key, expiresAt);
    if (this.until.size > this.cap) {
      // Memory stays bounded: give up on the index (every lookup asks Redis) until a rebuild fits.
      this.until.clear();
      this.state = 'overflow';
    }
  }

  /** False only when the index is trusted and holds no unexpired record of the key. */
  mayHold(key: string, now: number): boolean {
    if (this.state !== 'ready') return true;
    const expiresAt = this.until.get(key);
    return expiresAt !== undefined && expiresAt > now;
  }

  /** Drop records whose expiry has passed (they already answer "not there"; this frees memory). */
  prune(now: number): void {
    for (const [key, expiresAt] of this.until) {
      if (expiresAt <= now) this.until.delete(key);
    }
  }
}
