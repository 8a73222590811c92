import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { PeriodicSweeper, type StaleHold } from '../sweep/periodic-sweeper.js';
import { HoldRepository } from './hold.repository.js';
import { HoldsService } from './holds.service.js';

/**
 * Expires holds whose caller never settled or released them (a crashed gateway, a lost reply), so
 * their units return to the allowance; billing_resolve's conditional update decides races.
 */
@Injectable()
export class HoldSweeper extends PeriodicSweeper {
  constructor(
    private readonly repo: HoldRepository,
    private readonly holds: HoldsService,
    clock: Clock,
    @Inject(BILLING_CONFIG) config: BillingConfig,
  ) {
    super('hold', 'billing-sweeper', config.BILLING_SWEEP_INTERVAL_MS, () => clock.now());
  }

  protected stale(now: Date, limit: number): Promise<StaleHold[]> {
    return this.repo.expired(now, limit);
  }

  protected expire(hold: StaleHold, now: Date): Promise<boolean> {
    return this.holds.expire(hold.id, hold.accountId, now);
  }
}
