import type { BillingErrorCode } from '@drael/contracts';
import { metrics } from '@drael/metrics';

/** Billing's series (docs/operations.md). */
const holds = metrics.counter({
  name: 'drael_billing_holds_total',
  help: 'Tool holds, by event (opened, settled, released, expired) and tool',
  labels: { event: ['opened', 'settled', 'released', 'expired'], tool: 30 },
});
const holdLatency = metrics.histogram({
  name: 'drael_billing_hold_duration_seconds',
  help: 'Time to place a hold (one database round trip), by result (held, refused, failed)',
  labels: { result: ['held', 'refused', 'failed'] },
});
const refusals = metrics.counter({
  name: 'drael_billing_refusals_total',
  help: 'Holds and spend refused, by reason (plan_required, allowance, balance, budget, rate_limited)',
  labels: { reason: ['plan_required', 'allowance', 'balance', 'budget', 'rate_limited'] },
});

/** The error codes that are a refusal of credit, and the reason each counts as. */
const REFUSAL_REASONS: Partial<Record<BillingErrorCode, string>> = {
  plan_required: 'plan_required',
  weekly_allowance_reached: 'allowance',
  daily_ceiling_reached: 'budget',
  monthly_budget_reached: 'budget',
  insufficient_balance: 'balance',
  agent_rate_limited: 'rate_limited',
};

const sources: { holds?: () => Promise<{ open: number; pastExpiry: number }> } = {};
let lastRead: Promise<{ open: number; pastExpiry: number } | undefined> | undefined;
/** One database read per scrape serves both gauges; a database that does not answer leaves them out of that scrape. */
const readHolds = () => (lastRead ??= (sources.holds?.() ?? Promise.resolve(undefined)).catch(() => undefined).finally(() => setTimeout(() => (lastRead = undefined), 1_000)));
metrics.gauge({
  name: 'drael_billing_holds_open',
  help: 'Holds not yet settled, released or expired (read from the database at scrape time)',
  collect: async (set) => {
    const r = await readHolds();
    if (r) set({}, r.open);
  },
});
metrics.gauge({
  name: 'drael_billing_holds_open_past_expiry',
  help: 'Open holds whose expiry has passed (the sweeper should have expired them)',
  collect: async (set) => {
    const r = await readHolds();
    if (r) set({}, r.pastExpiry);
  },
});

export function watchHolds(read: () => Promise<{ open: number; pastExpiry: number }>): void {
  sources.holds = read;
}

export const recordHoldEvent = (event: 'opened' | 'settled' | 'released' | 'expired', tool: string) => holds.inc({ event, tool });
export const timeHold = () => holdLatency.time() as (end: { result: 'held' | 'refused' | 'failed' }) => void;
export function recordRefusal(code: BillingErrorCode): void {
  const reason = REFUSAL_REASONS[code];
  if (reason) refusals.inc({ reason });
}
