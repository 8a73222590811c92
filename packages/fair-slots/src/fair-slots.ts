export interface FairSlotLimits {
  /** Holders at once (e.g. SANDBOX_MAX_CONCURRENT, FETCH_BROWSER_CONCURRENCY). */
  max: number;
  /** Waiters for a slot. */
  queueMax: number;
  /** Holders at once of one tenant. */
  maxPerTenant: number;
  /** Waiters of one tenant. */
  queueMaxPerTenant: number;
}

/**
 * The bounds with a tenant's share filled in where it is not configured: half the slots (so the
 * other half always serves the other tenants) and a quarter of the queue (so at least four tenants
 * can wait at once), at least 1 each.
 */
export function tenantShareOf(bounds: { max: number; queueMax: number; maxPerTenant?: number | undefined; queueMaxPerTenant?: number | undefined }): FairSlotLimits {
  return {
    max: bounds.max,
    queueMax: bounds.queueMax,
    maxPerTenant: bounds.maxPerTenant ?? Math.max(1, Math.floor(bounds.max / 2)),
    queueMaxPerTenant: bounds.queueMaxPerTenant ?? Math.max(1, Math.floor(bounds.queueMax / 4)),
  };
}

/**
 * Why a caller got no slot; the caller's `refuse` turns it into its own typed, retryable error.
 * - `tenant`: the tenant's share of the queue is full (its holders and waiters given);
 * - `replica`: the whole queue is full;
 * - `deadline`: its deadline passed before a slot came free (its caller no longer waits).
 */
/**
 * The tenant a caller that names none counts as: such callers share one tenant's share between
 * them, so a caller cannot get more than one tenant's share by leaving its tenant out.
 */
export const ANONYMOUS_TENANT = '';

export type Refusal =
  | { share: 'tenant'; running: number; queued: number; maxPerTenant: number; queueMaxPerTenant: number }
  | { share: 'replica'; running: number; queued: number; max: number; queueMax: number }
  | { share: 'deadline' };

export interface AcquireOptions {
  /** Epoch ms after which the work must not start: its caller no longer waits for its answer. */
  deadline?: number;
  /** Aborted (the work was cancelled, or its caller gave up): the waiter leaves the queue at once. */
  signal?: AbortSignal;
}

interface Waiter {
  tenant: string;
  grant(): void;
  fail(err: Error): void;
}

/**
 * Slots of one process shared fairly between tenants (issue F8: one tenant's burst took every slot
 * and the whole queue, and every other tenant was refused or timed out for minutes).
 *
 * - At most `max` holders at once and `queueMax` waiting; and of one tenant at most `maxPerTenant`
 *   holding and `queueMaxPerTenant` waiting, so the rest is always there for the others. Past
 *   either bound a caller is refused at once (`refuse`), never left to hang.
 * - A freed slot goes to the tenants in turn (round-robin over the tenants that wait, each
 *   tenant's own waiters first come first served), so one tenant's long queue never sits in front
 *   of another tenant's single request.
 * - A waiter leaves the queue, refused, when its deadline passes (its caller has given up: the work
 *   would be answered to nobody), or at once when its signal aborts.
 *
 * It knows nothing of what the slots are for: the caller names the tenant and makes the refusal.
 */
export class FairSlots {
  private active = 0;
  private queued = 0;
  private readonly runningByTenant = new Map<string, number>();
  // Insertion order is the round-robin order: a tenant served goes to the back.
  private readonly waitingByTenant = new Map<string, Waiter[]>();

  constructor(
    private readonly limits: FairSlotLimits,
    private readonly refuse: (refusal: Refusal) => Error,
  ) {}

  get stats() {
    return { active: this.active, queued: this.queued, max: this.limits.max, queueMax: this.limits.queueMax };
  }

  /** One tenant's share in use: its holders and its waiters. */
  statsOf(tenant: string) {
    return { active: this.runningByTenant.get(tenant) ?? 0, queued: this.waitingByTenant.get(tenant)?.length ?? 0 };
  }

  /** Resolves with the slot's release once the work may start; rejects with `refuse(...)` or the signal's reason. */
  acquire(tenant: string, options: AcquireOptions = {}): Promise<() => void> {
    const { deadline, signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled(signal));
    if (!this.waitingByTenant.has(tenant) && this.mayRun(tenant)) return Promise.resolve(this.take(tenant));

    const mine = this.statsOf(tenant);
    if (mine.queued >= this.limits.queueMaxPerTenant) {
      return Promise.reject(
        this.refuse({ share: 'tenant', running: mine.active, queued: mine.queued, maxPerTenant: this.limits.maxPerTenant, queueMaxPerTenant: this.limits.queueMaxPerTenant }),
      );
    }
    if (this.queued >= this.limits.queueMax) {
      return Promise.reject(this.refuse({ share: 'replica', running: this.active, queued: this.queued, max: this.limits.max, queueMax: this.limits.queueMax }));
    }
    const waitMs = deadline === undefined ? undefined : deadline - Date.now();
    if (waitMs !== undefined && waitMs <= 0) return Promise.reject(this.refuse({ share: 'deadline' }));

    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        tenant,
        grant: () => {
          leave();
          resolve(this.take(tenant));
        },
        fail: (err) => {
          leave();
          this.dequeue(waiter);
          reject(err);
        },
      };
      const onAbort = () => waiter.fail(cancelled(signal));
      if (waitMs !== undefined) timer = setTimeout(() => waiter.fail(this.refuse({ share: 'deadline' })), waitMs).unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      const queue = this.waitingByTenant.get(tenant);
      if (queue) queue.push(waiter);
      else this.waitingByTenant.set(tenant, [waiter]);
      this.queued += 1;
    });
  }

  private mayRun(tenant: string): boolean {
    return this.active < this.limits.max && (this.runningByTenant.get(tenant) ?? 0) < this.limits.maxPerTenant;
  }

  private take(tenant: string): () => void {
    this.active += 1;
    this.runningByTenant.set(tenant, (this.runningByTenant.get(tenant) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active -= 1;
      const left = (this.runningByTenant.get(tenant) ?? 1) - 1;
      if (left > 0) this.runningByTenant.set(tenant, left);
      else this.runningByTenant.delete(tenant);
      this.serveNext();
    };
  }

  /** Hands free slots to the waiting tenants in turn, skipping a tenant at its share. */
  private serveNext(): void {
    while (this.active < this.limits.max) {
      let next: Waiter | undefined;
      for (const [tenant, queue] of this.waitingByTenant) {
        if (!this.mayRun(tenant)) continue;
        next = queue[0];
        break;
      }
      if (!next) return;
      this.dequeue(next);
      // Served: to the back of the round, behind every other tenant that waits.
      const rest = this.waitingByTenant.get(next.tenant);
      if (rest) {
        this.waitingByTenant.delete(next.tenant);
        this.waitingByTenant.set(next.tenant, rest);
      }
      next.grant();
    }
  }

  private dequeue(waiter: Waiter): void {
    const queue = this.waitingByTenant.get(waiter.tenant);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.queued -= 1;
    if (queue.length === 0) this.waitingByTenant.delete(waiter.tenant);
  }
}

function cancelled(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('cancelled while it waited for a slot');
}
