import { SandboxError } from '../sandbox-error.js';

export interface RunSlotLimits {
  /** Runs at once on this replica (SANDBOX_MAX_CONCURRENT). */
  max: number;
  /** Runs waiting for a slot on this replica (SANDBOX_MAX_QUEUE). */
  queueMax: number;
  /** Runs at once of one tenant (SANDBOX_MAX_CONCURRENT_PER_TENANT). */
  maxPerTenant: number;
  /** Runs of one tenant waiting for a slot (SANDBOX_MAX_QUEUE_PER_TENANT). */
  queueMaxPerTenant: number;
}

/**
 * The slots' bounds from the configuration. A tenant's share, unless configured: half the slots
 * (so the other half always serves the other tenants) and a quarter of the queue (so at least
 * four tenants can wait at once), at least 1 each.
 */
export function tenantShareOf(config: {
  SANDBOX_MAX_CONCURRENT: number;
  SANDBOX_MAX_QUEUE: number;
  SANDBOX_MAX_CONCURRENT_PER_TENANT?: number | undefined;
  SANDBOX_MAX_QUEUE_PER_TENANT?: number | undefined;
}): RunSlotLimits {
  return {
    max: config.SANDBOX_MAX_CONCURRENT,
    queueMax: config.SANDBOX_MAX_QUEUE,
    maxPerTenant: config.SANDBOX_MAX_CONCURRENT_PER_TENANT ?? Math.max(1, Math.floor(config.SANDBOX_MAX_CONCURRENT / 2)),
    queueMaxPerTenant: config.SANDBOX_MAX_QUEUE_PER_TENANT ?? Math.max(1, Math.floor(config.SANDBOX_MAX_QUEUE / 4)),
  };
}

export interface AcquireOptions {
  /** Epoch ms after which the run must not start: its caller no longer waits for its answer. */
  deadline?: number;
  /** Aborted (the run was cancelled): the waiter leaves the queue at once. */
  signal?: AbortSignal;
}

interface Waiter {
  tenant: string;
  grant(): void;
  fail(err: Error): void;
}

/**
 * The run slots of one replica, shared fairly between tenants (issue F8: one chat request of one
 * tenant, up to 128 parallel run_code calls, took every slot and the whole queue, and every other
 * tenant was refused or timed out for minutes).
 *
 * - At most `max` runs at once and `queueMax` waiting, as before; and of one tenant at most
 *   `maxPerTenant` running and `queueMaxPerTenant` waiting, so the rest is always there for the
 *   others. Past either bound a run is refused at once with the retryable `sandbox_busy`, never
 *   left to hang.
 * - A freed slot goes to the tenants in turn (round-robin over the tenants that wait, each
 *   tenant's own runs first come first served), so one tenant's long queue never sits in front of
 *   another tenant's single run.
 * - A waiter leaves the queue, refused, when its deadline passes (its caller has given up: the run
 *   would be answered to nobody) or when its run is cancelled.
 */
export class RunSlots {
  private active = 0;
  private queued = 0;
  private readonly runningByTenant = new Map<string, number>();
  // Insertion order is the round-robin order: a tenant served goes to the back.
  private readonly waitingByTenant = new Map<string, Waiter[]>();

  constructor(private readonly limits: RunSlotLimits) {}

  get stats() {
    return { active: this.active, queued: this.queued, max: this.limits.max, queueMax: this.limits.queueMax };
  }

  /** One tenant's share in use: its runs holding a slot and waiting for one. */
  statsOf(tenant: string) {
    return { active: this.runningByTenant.get(tenant) ?? 0, queued: this.waitingByTenant.get(tenant)?.length ?? 0 };
  }

  /** Resolves with the slot's release once the run may start; rejects `sandbox_busy` (or the signal's reason). */
  acquire(tenant: string, options: AcquireOptions = {}): Promise<() => void> {
    const { deadline, signal } = options;
    if (signal?.aborted) return Promise.reject(cancelled(signal));
    if (!this.waitingByTenant.has(tenant) && this.mayRun(tenant)) return Promise.resolve(this.take(tenant));

    const mine = this.statsOf(tenant);
    if (mine.queued >= this.limits.queueMaxPerTenant) {
      return Promise.reject(
        busy(
          `this tenant's share of the sandbox is taken (${mine.active} of its ${this.limits.maxPerTenant} runs at once, ${mine.queued} of its ${this.limits.queueMaxPerTenant} waiting); retry shortly`,
          { share: 'tenant', running: mine.active, queued: mine.queued },
        ),
      );
    }
    if (this.queued >= this.limits.queueMax) {
      return Promise.reject(
        busy(`the sandbox is at capacity (${this.active} running, ${this.queued} queued); retry shortly`, { share: 'replica', running: this.active, queued: this.queued }),
      );
    }
    const waitMs = deadline === undefined ? undefined : deadline - Date.now();
    if (waitMs !== undefined && waitMs <= 0) return Promise.reject(expired());

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
      if (waitMs !== undefined) timer = setTimeout(() => waiter.fail(expired()), waitMs).unref();
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

function busy(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError('sandbox_busy', message, true, details);
}

function cancelled(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('the run was cancelled while it waited for a slot');
}

function expired(): SandboxError {
  return busy('no run slot came free while the caller still waited for the whole run; it was not started; retry shortly', { share: 'deadline' });
}
