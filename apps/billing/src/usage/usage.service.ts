import { Injectable } from '@nestjs/common';
import { METERS, type Meter, type Usage, type UsageDay } from '@drael/contracts';
import { Clock } from '../clock/clock.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { PlansService } from '../plans/plans.service.js';
import { SpendService } from '../spend/spend.service.js';
import { UsageRepository } from './usage.repository.js';
import { utcDay, weekStart } from './week.js';

@Injectable()
export class UsageService {
  constructor(
    private readonly usage: UsageRepository,
    private readonly accounts: AccountsService,
    private readonly plans: PlansService,
    private readonly clock: Clock,
    private readonly spend: SpendService,
  ) {}

  /** The week's allowances, used, held and extra usage, and today's extra usage against the ceiling. */
  async get(accountId: string, now = this.clock.now()): Promise<Usage> {
    const account = await this.accounts.get(accountId);
    const plan = this.plans.find(account.plan);
    const week = weekStart(now);
    const [rows, daily, extra, wallet] = await Promise.all([
      this.usage.weekly(account.id, week),
      this.usage.daily(account.id, utcDay(now)),
      this.usage.extraByMeter(account.id, week),
      this.spend.wallet(account.id, now),
    ]);
    const meter = (m: Meter) => {
      const row = rows.find((r) => r.meter === m);
      return { allowance: row?.allowance ?? plan?.weekly[m] ?? 0, used: row?.used ?? 0, held: row?.held ?? 0, extra: extra.get(m) ?? 0 };
    };
    return {
      account_id: account.id,
      plan: account.plan,
      week_start: week.toISOString(),
      allowances: Object.fromEntries(METERS.map((m) => [m, meter(m)])) as Usage['allowances'],
      extra_usage: {
        enabled: account.extraUsageEnabled,
        daily_ceiling: account.dailyCeiling,
        used_today: (daily?.used ?? 0) + (daily?.held ?? 0),
      },
      agent_spend: {
        balance_usd: wallet.balance_micros / 1_000_000,
        held_usd: wallet.held_micros / 1_000_000,
        monthly_budget_usd: wallet.monthly_budget_micros === null ? null : wallet.monthly_budget_micros / 1_000_000,
        month_start: wallet.month_start,
        spent_this_month_usd: wallet.spent_this_month_micros / 1_000_000,
        steps_per_minute: wallet.agent_steps_per_minute,
      },
    };
  }

  /**
   * The last `days` UTC days (today included, oldest first, zeros included) of billed operations:
   * charged paid-tool calls with their units, charged agent steps with their cost. Free calls
   * (chat turns, run_code, search, fetch) are never billed, so billing does not count them.
   */
  async daily(accountId: string, days: number, now = this.clock.now()): Promise<UsageDay[]> {
    const account = await this.accounts.get(accountId);
    const today = utcDay(now);
    const from = new Date(today.getTime() - (days - 1) * DAY_MS);
    const [tools, spend] = await Promise.all([this.usage.toolCallsByDay(account.id, from), this.usage.spendByDay(account.id, from)]);
    return Array.from({ length: days }, (_, i) => {
      const day = new Date(from.getTime() + i * DAY_MS).toISOString().slice(0, 10);
      const rows = tools.filter((r) => r.day === day);
      const units = Object.fromEntries(METERS.map((m) => [m, rows.filter((r) => r.meter === m).reduce((n, r) => n + r.units, 0)])) as UsageDay['units'];
      const toolCalls = rows.reduce((n, r) => n + r.calls, 0);
      const s = spend.find((r) => r.day === day);
      const steps = s?.steps ?? 0;
      return { day, tool_calls: toolCalls, units, agent_steps: steps, spend_usd: Number(s?.micros ?? 0n) / 1_000_000, requests: toolCalls + steps };
    });
  }
}

const DAY_MS = 86_400_000;
