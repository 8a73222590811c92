import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { Clock } from '../clock/clock.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { SpendRepository } from './spend.repository.js';
import { SpendService } from './spend.service.js';

const BATCH = 500;

/**
 * Expires spend holds whose agent worker never settled or released them (a killed worker, a lost
 * reply), so the reserved money returns to the balance and the month. Every replica may sweep:
 * spend_resolve's conditional update lets one resolution win against a late settle.
 */
@Injectable()
export class SpendSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private readonly log = createLogger('billing-spend-sweeper');

  constructor(
    private readonly repo: SpendRepository,
    private readonly spend: SpendService,
    private readonly clock: Clock,
    @Inject(BILLING_CONFIG) private readonly config: BillingConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .catch((err: unknown) => {
          this.log.error({ err }, 'spend hold sweep failed');
          return 0;
        })
        .finally(() => (this.running = undefined));
    }, this.config.BILLING_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass; returns how many spend holds this pass expired. */
  async sweep(now = this.clock.now()): Promise<number> {
    let expired = 0;
    for (;;) {
      const stale = await this.repo.expired(now, BATCH);
      for (const h of stale) if (await this.spend.expire(h.id, h.accountId, now)) expired++;
      if (stale.length < BATCH) return expired;
    }
  }
}
