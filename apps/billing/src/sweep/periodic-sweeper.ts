import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';

const BATCH = 500;

/** A held row past its ttl, as the repositories list them. */
export interface StaleHold {
  id: string;
  accountId: string;
}

/**
 * The shared life of billing's sweepers (unit holds, spend holds): a pass every interval, never
 * two passes at once, stale rows read in batches and expired one by one, and shutdown waiting for
 * the pass in progress. Every replica may sweep: each expiry is a conditional update in the
 * database, so one resolution wins against a concurrent settle or another sweeper.
 */
export abstract class PeriodicSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private readonly log;

  /** `what` names the holds in log lines; `service` is the logger's service name. */
  protected constructor(
    private readonly what: string,
    service: string,
    private readonly intervalMs: number,
    private readonly now: () => Date,
  ) {
    this.log = createLogger(service);
  }

  /** Up to `limit` holds past their ttl at `now`. */
  protected abstract stale(now: Date, limit: number): Promise<StaleHold[]>;
  /** Expires one; false when another resolution got there first. */
  protected abstract expire(hold: StaleHold, now: Date): Promise<boolean>;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .catch((err: unknown) => {
          this.log.error({ err }, `${this.what} sweep failed`);
          return 0;
        })
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; returns how many holds this pass expired. */
  async sweep(now = this.now()): Promise<number> {
    let expired = 0;
    for (;;) {
      const stale = await this.stale(now, BATCH);
      for (const h of stale) if (await this.expire(h, now)) expired++;
      if (stale.length < BATCH) return expired;
    }
  }
}
