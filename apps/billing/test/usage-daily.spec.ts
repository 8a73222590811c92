import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { newAccount, startBilling, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

let seq = 0;
async function chargeTool(account_id: string, tool: 'generate_image' | 'contact_lookup', units: number, settle: 'settle' | 'release' = 'settle') {
  const h = await b.rpc(billingCatalog.hold, { account_id, tool, units, idempotency_key: `daily-${++seq}` });
  if (settle === 'settle') await b.rpc(billingCatalog.settle, { account_id, hold_id: h.hold_id, units });
  else await b.rpc(billingCatalog.release, { account_id, hold_id: h.hold_id });
}

async function chargeStep(account_id: string, micros: number, sequence: number, previous: string | null): Promise<string> {
  const h = await b.rpc(billingCatalog.reserveSpend, { account_id, run_id: 'run_daily', kind: 'inference.chat', amount_micros: micros, idempotency_key: `step-${++seq}` });
  const fp = '0'.repeat(64);
  const { receipt } = await b.rpc(billingCatalog.settleSpend, {
    account_id,
    hold_id: h.hold_id,
    kind: 'inference.chat',
    amount_micros: micros,
    receipt: { usage: {}, input_fingerprint: fp, output_fingerprint: fp, run: { id: 'run_daily', sequence, previous_receipt_hash: previous } },
  });
  return receipt.hash;
}

describe('billing.usage.daily.v1 (the console chart)', () => {
  it('answers one entry per UTC day, oldest first, with charged tool calls, units, agent steps and spend; released holds do not count', async () => {
    const acct = await newAccount(b, 'pro');
    await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 10_000_000 });
    await b.rpc(billingCatalog.setAgentLimits, { account_id: acct, agent_steps_per_minute: 100_000 });

    b.clock.set('2026-11-28T10:00:00.000Z');
    await chargeTool(acct, 'generate_image', 2);
    const h0 = await chargeStep(acct, 1_500_000, 0, null);
    b.clock.set('2026-11-30T23:59:00.000Z');
    await chargeTool(acct, 'contact_lookup', 3);
    await chargeTool(acct, 'generate_image', 1, 'release');
    await chargeStep(acct, 250_000, 1, h0);

    b.clock.set('2026-12-01T08:00:00.000Z');
    const { days } = await b.rpc(billingCatalog.usageDaily, { account_id: acct, days: 5 });
    expect(days.map((d) => d.day)).toEqual(['2026-11-27', '2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01']);
    expect(days[1]).toEqual({ day: '2026-11-28', tool_calls: 1, units: { images: 2, lookups: 0 }, agent_steps: 1, spend_usd: 1.5, requests: 2 });
    expect(days[3]).toEqual({ day: '2026-11-30', tool_calls: 1, units: { images: 0, lookups: 3 }, agent_steps: 1, spend_usd: 0.25, requests: 2 });
    for (const i of [0, 2, 4]) expect(days[i]).toMatchObject({ tool_calls: 0, agent_steps: 0, spend_usd: 0, requests: 0 });

    // Defaults to 30 days; another account sees none of this one's.
    expect((await b.rpc(billingCatalog.usageDaily, { account_id: acct })).days).toHaveLength(30);
    const other = await newAccount(b, 'pro');
    const theirs = await b.rpc(billingCatalog.usageDaily, { account_id: other, days: 5 });
    expect(theirs.days.every((d) => d.requests === 0)).toBe(true);
  });

  it('refuses an unknown account and a window past 90 days', async () => {
    await expect(b.rpc(billingCatalog.usageDaily, { account_id: '00000000-0000-4000-8000-000000000000', days: 3 })).rejects.toMatchObject({ code: 'account_not_found' });
    await expect(b.rpc(billingCatalog.usageDaily, { account_id: await newAccount(b), days: 91 })).rejects.toMatchObject({ code: 'bad_request' });
  });
});
