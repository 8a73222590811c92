import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { contactLookupUnits, TOOL_METER, type Hold, type ParsedRequestOf, type billingCatalog } from '@drael/contracts';
import { inSpan } from '@drael/tracing';
import { billingError, isUuid } from '../billing-error.js';
import { Clock } from '../clock/clock.js';
import { PlansService } from '../plans/plans.service.js';
import { HoldRepository } from './hold.repository.js';
import { RpcError } from '@drael/nats-rpc';
import { recordHoldEvent, timeHold } from '../billing.metrics.js';

type HoldRequest = ParsedRequestOf<typeof billingCatalog.hold>;
type SettleRequest = ParsedRequestOf<typeof billingCatalog.settle>;
type ReleaseRequest = ParsedRequestOf<typeof billingCatalog.release>;
type ReleaseByKeyRequest = ParsedRequestOf<typeof billingCatalog.releaseByKey>;

@Injectable()
export class HoldsService {
  constructor(
    private readonly holds: HoldRepository,
    private readonly plans: PlansService,
    private readonly clock: Clock,
  ) {}

  /**
   * Holds credit before a paid call: counts against the allowance at once, or says why not. One
   * database round trip: the account's plan is read inside billing_hold, which gets the figures.
   */
  async hold(req: HoldRequest, now = this.clock.now()): Promise<Hold> {
    const done = timeHold();
    try {
      const hold = await this.place(req, now);
      done({ result: 'held' });
      return hold;
    } catch (err) {
      done({ result: err instanceof RpcError && !err.retryable ? 'refused' : 'failed' });
      throw err;
    }
  }

  private async place(req: HoldRequest, now: Date): Promise<Hold> {
    if (!isUuid(req.account_id)) throw billingError('account_not_found', 'no such account');
    const meter = TOOL_METER[req.tool];
    // The hold's span: the database round trip that decides it, with the outcome (created, or why not).
    const { outcome, plan, hold } = await inSpan('hold', { attributes: { 'drael.billing.tool': req.tool } }, async (span) => {
      const decided = await this.holds.hold({
        id: randomUUID(),
        accountId: req.account_id,
        idempotencyKey: req.idempotency_key,
        tool: req.tool,
        meter,
        units: req.units,
        allowances: this.plans.allowancesFor(req.tool),
        now,
        ttlS: req.ttl_s,
      });
      span.setAttributes({ 'drael.billing.outcome': decided.outcome });
      return decided;
    });
    switch (outcome) {
      case 'created':
        recordHoldEvent('opened', req.tool);
        return hold!;
      case 'existing':
        return hold!;
      case 'account_not_found':
        throw billingError('account_not_found', 'no such account');
      case 'plan_required':
        // spec 01: a tool the plan does not include answers plan_required, before anything is written.
        throw billingError('plan_required', `${req.tool} is not included in the ${plan} plan`, { tool: req.tool, plan });
      case 'conflict':
        throw billingError('idempotency_conflict', 'this idempotency key was used for a different hold', { hold_id: hold?.hold_id });
      case 'weekly_allowance_reached':
        throw billingError('weekly_allowance_reached', `the ${plan} plan's ${meter} for this week are used`, { meter, plan });
      case 'daily_ceiling_reached':
        throw billingError('daily_ceiling_reached', "today's extra usage ceiling is reached", { meter });
    }
  }

  /** Settles with the units actually used (a contact lookup: per contact, premium double), capped at the hold. */
  async settle(req: SettleRequest, now = this.clock.now()): Promise<Hold> {
    const units = req.units ?? contactLookupUnits(req.contacts!);
    return this.resolve(req.hold_id, req.account_id, 'settled', units, now);
  }

  /** The tool did not run: the whole hold returns. */
  async release(req: ReleaseRequest, now = this.clock.now()): Promise<Hold> {
    return this.resolve(req.hold_id, req.account_id, 'released', 0, now);
  }

  /**
   * The create's caller never heard its answer, so it has no hold id: the hold under its
   * idempotency key is released, or, if the create has not landed yet, the key is recorded as
   * released so that the create, arriving later, takes nothing (billing_release_by_key decides
   * the race in one transaction). Idempotent: an already resolved hold is answered as it is.
   */
  async releaseByKey(req: ReleaseByKeyRequest, now = this.clock.now()): Promise<Hold> {
    if (!isUuid(req.account_id)) throw billingError('account_not_found', 'no such account');
    const { outcome, hold } = await this.holds.releaseByKey({
      id: randomUUID(),
      accountId: req.account_id,
      idempotencyKey: req.idempotency_key,
      tool: req.tool,
      meter: TOOL_METER[req.tool],
      units: req.units,
      now,
    });
    switch (outcome) {
      case 'account_not_found':
        throw billingError('account_not_found', 'no such account');
      case 'conflict':
        throw billingError('idempotency_conflict', 'this idempotency key was used for a different hold', { hold_id: hold?.hold_id });
      case 'released':
        recordHoldEvent('released', req.tool);
        return hold!;
      case 'voided':
      case 'resolved_before':
        return hold!;
    }
  }

  /** The sweeper's move for a stale hold; false when something else resolved it first. */
  async expire(holdId: string, accountId: string, now = this.clock.now()): Promise<boolean> {
    const res = await this.holds.resolve(holdId, accountId, 'expired', 0, now);
    if (res.outcome === 'resolved' && res.hold) recordHoldEvent('expired', res.hold.tool);
    return res.outcome === 'resolved';
  }

  private async resolve(holdId: string, accountId: string, status: 'settled' | 'released', units: number, now: Date): Promise<Hold> {
    // Another account's hold is "not found": ids are checked together with the caller's account.
    const res = isUuid(holdId) && isUuid(accountId) ? await this.holds.resolve(holdId, accountId, status, units, now) : { outcome: 'not_found' as const };
    if (res.outcome === 'not_found') throw billingError('hold_not_found', 'no such hold for this account');
    if (res.outcome === 'resolved_before') {
      throw billingError('hold_already_resolved', `the hold is already ${res.hold?.status}`, { status: res.hold?.status });
    }
    recordHoldEvent(status, res.hold!.tool);
    return res.hold!;
  }
}
