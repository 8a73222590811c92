import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { Clock } from '../clock/clock.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { HoldRepository } from './hold.repository.js';
import { HoldsService } from './holds.service.js';

const BATCH = 500;

/**
 * Expires holds whose caller never settled or released them (a crashed gateway, a lost reply), so
 * their units return to the allowance. Every replica may sweep: billing_resolve's conditional
 * update lets one resolution win against a concurrent settle or another sweeper.
 */
@Injectable()
export class HoldSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private readonly log = createLogger('billing-sweeper');

  constructor(
    private readonly repo: HoldRepository,
    private readonly holds: HoldsService,
    private readonly clock: Clock,
    @Inject(BILLING_CONFIG) private readonly config: BillingConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .catch((err: unknown) => {
          this.log.error({ err }, 'hold sweep failed');
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

  /** One pass; returns how many holds this pass expired. */
  async sweep(now = this.clock.now()): Promise<number> {
    let expired = 0;
    for (;;) {
      const stale = await this.repo.expired(now, BATCH);
      for (const h of stale) if (await this.holds.expire(h.id, h.accountId, now)) expired++;
      if (stale.length < BATCH) return expired;
    }
  }
}
