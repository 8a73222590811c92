import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ParsedRequestOf, ReplyOf, billingCatalog } from '@drael/contracts';
import { billingError, isUuid } from '../billing-error.js';
import { Clock } from '../clock/clock.js';
import { PlansService } from '../plans/plans.service.js';
import { AccountRepository, type AccountRow } from './account.repository.js';

@Injectable()
export class AccountsService {
  constructor(
    private readonly accounts: AccountRepository,
    private readonly plans: PlansService,
    private readonly clock: Clock,
  ) {}

  async create(req: ParsedRequestOf<typeof billingCatalog.createAccount>): Promise<ReplyOf<typeof billingCatalog.createAccount>> {
    if (!this.plans.find(req.plan)) throw billingError('plan_not_found', `no plan named ${req.plan}`);
    const row = await this.accounts.create({
      id: randomUUID(),
      name: req.name,
      plan: req.plan,
      extraUsageEnabled: req.extra_usage?.enabled ?? false,
      dailyCeiling: req.extra_usage?.daily_ceiling ?? 0,
    });
    return { account_id: row.id, name: row.name, plan: row.plan };
  }

  /** The account, or account_not_found. */
  async get(accountId: string): Promise<AccountRow> {
    const row = isUuid(accountId) ? await this.accounts.find(accountId) : null;
    if (!row) throw billingError('account_not_found', 'no such account');
    return row;
  }

  async setExtraUsage(req: ParsedRequestOf<typeof billingCatalog.setExtraUsage>): Promise<ReplyOf<typeof billingCatalog.setExtraUsage>> {
    const row = isUuid(req.account_id) ? await this.accounts.setExtraUsage(req.account_id, req.enabled, req.daily_ceiling, this.clock.now()) : null;
    if (!row) throw billingError('account_not_found', 'no such account');
    return { account_id: row.id, enabled: row.extraUsageEnabled, daily_ceiling: row.dailyCeiling };
  }

  /** The operator's listing, newest first (keyset pages: `before` is the previous page's last id). */
  async list(req: ParsedRequestOf<typeof billingCatalog.listAccounts>): Promise<ReplyOf<typeof billingCatalog.listAccounts>> {
    const cursor = req.before === undefined ? undefined : isUuid(req.before) ? await this.accounts.createdAt(req.before) : null;
    if (cursor === null) throw billingError('account_not_found', 'no such account to page from');
    const rows = await this.accounts.list(req.limit + 1, cursor);
    return {
      accounts: rows.slice(0, req.limit).map((r) => ({
        account_id: r.id,
        name: r.name,
        plan: r.plan,
        extra_usage: { enabled: r.extraUsageEnabled, daily_ceiling: r.dailyCeiling },
        created_at: r.createdAt.toISOString(),
      })),
      has_more: rows.length > req.limit,
    };
  }
}
