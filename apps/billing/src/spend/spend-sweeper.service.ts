import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { PeriodicSweeper, type StaleHold } from '../sweep/periodic-sweeper.js';
import { SpendRepository } from './spend.repository.js';
import { SpendService } from './spend.service.js';

/**
 * Expires spend holds whose agent worker never settled or released them (a killed worker, a lost
 * reply), so the reserved money returns to the balance and the month; spend_resolve's conditional
 * update decides races with a late settle.
 */
@Injectable()
export class SpendSweeper extends PeriodicSweeper {
  constructor(
    private readonly repo: SpendRepository,
    private readonly spend: SpendService,
    clock: Clock,
    @Inject(BILLING_CONFIG) config: BillingConfig,
  ) {
    super('spend hold', 'billing-spend-sweeper', config.BILLING_SWEEP_INTERVAL_MS, () => clock.now());
  }

  protected stale(now: Date, limit: number): Promise<StaleHold[]> {
    return this.repo.expired(now, limit);
  }

  protected expire(hold: StaleHold, now: Date): Promise<boolean> {
    return this.spend.expire(hold.id, hold.accountId, now);
  }
}
