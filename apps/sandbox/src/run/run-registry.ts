import { Injectable } from '@nestjs/common';

// A cancel that finds no run here is remembered this long, so a run that arrives after its own
// cancel (the cancel is a broadcast on its own connection: no ordering with the run) never starts.
const EARLY_CANCEL_TTL_MS = 60_000;
// Bounds the memory a flood of cancels for unknown runs can take (a few MB at most).
const MAX_EARLY_CANCELS = 20_000;

/**
 * The runs this replica is executing, by tenant and run_id, so a cancel can stop them. Keyed by
 * tenant: a caller naming another account's run id stops nothing.
 */
@Injectable()
export class RunRegistry {
  private readonly running = new Map<string, AbortController>();
  private readonly earlyCancels = new Map<string, number>();

  /** Registers a run; its signal aborts when the run is cancelled. `done()` once it ended. */
  track(tenant: string, runId: string): { signal: AbortSignal; done(): void } {
    const key = keyOf(tenant, runId);
    const abort = new AbortController();
    const expiry = this.earlyCancels.get(key);
    if (expiry !== undefined) {
      this.earlyCancels.delete(key);
      if (expiry > Date.now()) abort.abort();
    }
    this.running.set(key, abort);
    return {
      signal: abort.signal,
      done: () => {
        if (this.running.get(key) !== abort) return;
        this.running.delete(key);
        // Cancelled while it ran: if the same run comes again (it ran beside its placement, which
        // then sent it elsewhere or to a restored workspace: SessionRouter), it does not start.
        if (abort.signal.aborted) this.rememberEarlyCancel(key);
      },
    };
  }

  /** Stops the run if this replica runs it (true); otherwise remembers the cancel for a while (false). */
  cancel(tenant: string, runId: string): boolean {
    const key = keyOf(tenant, runId);
    const abort = this.running.get(key);
    if (abort) {
      abort.abort();
      return true;
    }
    this.rememberEarlyCancel(key);
    return false;
  }

  private rememberEarlyCancel(key: string): void {
    const now = Date.now();
    this.earlyCancels.delete(key);
    this.earlyCancels.set(key, now + EARLY_CANCEL_TTL_MS);
    // Insertion order is expiry order: drop the expired and, past the bound, the oldest.
    for (const [k, expiry] of this.earlyCancels) {
      if (expiry > now && this.earlyCancels.size <= MAX_EARLY_CANCELS) break;
      this.earlyCancels.delete(k);
    }
  }
}

function keyOf(tenant: string, runId: string): string {
  // JSON: no tenant and run id pair can spell another pair's key.
  return JSON.stringify([tenant, runId]);
}
