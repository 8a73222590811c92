import { seededRandom } from '@drael/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactLookupUnits, TOOL_METER, type Hold, type Meter, type PaidTool } from '@drael/contracts';
import { PLANS } from '../src/plans/plans.js';
import { utcDay, weekStart } from '../src/usage/week.js';
import { newAccount, startBilling, unbalanced, type Billing } from './billing-harness.js';

/** A seeded draw with its helpers, so a failing run can be replayed from its seed. */
function prng(seed: number) {
  const next = seededRandom(seed);
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)), pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]! };
}

interface ModelHold {
  id: string;
  account: string;
  key: string;
  tool: PaidTool;
  meter: Meter;
  units: number;
  plan: number;
  extra: number;
  week: string;
  day: string;
  status: Hold['status'];
  settled: number | null;
  expiresAt: number;
}
interface ModelAccount {
  id: string;
  plan: (typeof PLANS)[number];
  extra?: { ceiling: number };
  weekly: Map<string, { allowance: number; used: number; held: number }>;
  daily: Map<string, { ceiling: number; used: number; held: number }>;
  keys: Map<string, ModelHold>;
}

const SEED = Number(process.env.BILLING_PROPERTY_SEED ?? 20261129);
const STEPS = Number(process.env.BILLING_PROPERTY_STEPS ?? 900);

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
  // The run's schema is shared by every billing test file, and the sweeper is global: expire the
  // holds other files left open first, so every sweep below counts only this model's holds.
  await b.sweeper.sweep(new Date('2999-01-01T00:00:00Z'));
});
afterAll(async () => {
  await b?.close();
});

describe('seeded random property test', () => {
  it(`holds, settles, releases, expiries, crashed callers and retries over accounts and weeks (seed ${SEED}, ${STEPS} steps)`, async () => {
    const r = prng(SEED);
    const plan = (id: string) => PLANS.find((p) => p.id === id)!;
    const accounts: ModelAccount[] = [];
    for (const [planId, extra] of [
      ['free', undefined],
      ['free', { ceiling: 4 }],
      ['pro', undefined],
      ['pro', { ceiling: 9 }],
    ] as const) {
      const id = await newAccount(b, planId, extra ? { daily_ceiling: extra.ceiling } : undefined);
      accounts.push({ id, plan: plan(planId), extra, weekly: new Map(), daily: new Map(), keys: new Map() });
    }
    const holds: ModelHold[] = [];
    let now = Date.parse('2026-11-25T10:00:00Z');
    const tools: PaidTool[] = ['generate_image', 'breach_lookup', 'contact_lookup'];
    const stats: Record<string, number> = {};
    const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
    const codeOf = async (p: Promise<unknown>): Promise<{ code: string; value?: Hold }> => {
      try {
        return { code: 'ok', value: (await p) as Hold };
      } catch (err) {
        return { code: (err as { code?: string }).code ?? String(err) };
      }
    };

    /** One operation on one account: runs it, checks the answer against the model, updates the model. */
    const operate = async (acct: ModelAccount, at: Date, ctx: string): Promise<void> => {
      const mine = holds.filter((h) => h.account === acct.id);
      const roll = r.next();
      if (roll < 0.6 || !mine.length) {
        // hold: a new key, or a retry of an old one (same amount, or another amount)
        const tool = r.pick(tools);
        const meter = TOOL_METER[tool];
        const retryOf = acct.keys.size && r.next() < 0.15 ? r.pick([...acct.keys.values()]) : undefined;
        const units = retryOf && r.next() < 0.7 ? retryOf.units : meter === 'images' ? r.int(1, 6) : r.int(1, 15);
        const theTool = retryOf && units === retryOf.units ? retryOf.tool : tool;
        const key = retryOf?.key ?? `k${keySeq++}`;
        const ttl = r.int(60, 7200);
        const got = await codeOf(b.holds.hold({ account_id: acct.id, tool: theTool, units, idempotency_key: key, ttl_s: ttl }, at));
        let expected: string;
        const theMeter = TOOL_METER[theTool];
        if (!acct.plan.tools.includes(theTool)) expected = 'plan_required';
        else {
          const week = weekStart(at).toISOString();
          const wk = `${week}|${theMeter}`;
          if (!acct.weekly.has(wk)) acct.weekly.set(wk, { allowance: acct.plan.weekly[theMeter], used: 0, held: 0 });
          const w = acct.weekly.get(wk)!;
          const prior = acct.keys.get(key);
          if (prior) {
            expected = prior.tool === theTool && prior.units === units ? 'ok' : 'idempotency_conflict';
            if (expected === 'ok') expect(got.value, ctx).toMatchObject({ hold_id: prior.id, status: prior.status });
          } else {
            const planPart = Math.min(units, Math.max(w.allowance - w.used - w.held, 0));
            const extraPart = units - planPart;
            const day = utcDay(at).toISOString();
            if (extraPart === 0) expected = 'ok';
            else if (!acct.extra) expected = 'weekly_allowance_reached';
            else {
              if (!acct.daily.has(day)) acct.daily.set(day, { ceiling: acct.extra.ceiling, used: 0, held: 0 });
              const d = acct.daily.get(day)!;
              expected = d.used + d.held + extraPart <= d.ceiling ? 'ok' : 'daily_ceiling_reached';
              if (expected === 'ok') d.held += extraPart;
            }
            if (expected === 'ok') {
              w.held += planPart;
              expect(got.value, ctx).toMatchObject({ plan_units: planPart, extra_units: extraPart, status: 'held' });
              const h: ModelHold = {
                id: got.value?.hold_id ?? '?',
                account: acct.id,
                key,
                tool: theTool,
                meter: theMeter,
                units,
                plan: planPart,
                extra: extraPart,
                week,
                day,
                status: 'held',
                settled: null,
                expiresAt: at.getTime() + ttl * 1000,
              };
              holds.push(h);
              acct.keys.set(key, h);
            }
          }
        }
        expect(got.code, `${ctx}: hold ${theTool} x${units}`).toBe(expected);
        count(`hold:${got.code}`);
      } else if (roll < 0.85) {
        // settle (sometimes a contact lookup's contacts; sometimes above the hold; sometimes a stale retry)
        const h = r.pick(mine);
        const useContacts = h.tool === 'contact_lookup' && r.next() < 0.5;
        const contacts = { plain: r.int(0, 5), premium: r.int(0, 4) };
        const units = useContacts ? contactLookupUnits(contacts) : r.int(0, h.units + 3);
        const got = await codeOf(b.holds.settle(useContacts ? { account_id: h.account, hold_id: h.id, contacts } : { account_id: h.account, hold_id: h.id, units }, at));
        if (h.status === 'held') {
          expect(got.code, ctx).toBe('ok');
          const s = Math.min(units, h.units);
          const planUsed = Math.min(s, h.plan);
          const w = acct.weekly.get(`${h.week}|${h.meter}`)!;
          w.held -= h.plan;
          w.used += planUsed;
          if (h.extra) {
            const d = acct.daily.get(h.day)!;
            d.held -= h.extra;
            d.used += s - planUsed;
          }
          h.status = 'settled';
          h.settled = s;
          expect(got.value, ctx).toMatchObject({ status: 'settled', settled_units: s });
        } else expect(got.code, ctx).toBe('hold_already_resolved');
        count(`settle:${got.code}`);
      } else {
        // release; now and then by another account (refused as not found, changes nothing)
        const h = r.pick(mine);
        const other = r.next() < 0.1 ? r.pick(accounts.filter((a) => a.id !== h.account)) : undefined;
        const got = await codeOf(b.holds.release({ account_id: other?.id ?? h.account, hold_id: h.id }, at));
        if (other) expect(got.code, ctx).toBe('hold_not_found');
        else if (h.status === 'held') {
          expect(got.code, ctx).toBe('ok');
          releaseInModel(accounts, h, 'released');
        } else expect(got.code, ctx).toBe('hold_already_resolved');
        count(`release:${got.code}`);
      }
    };

    let keySeq = 0;
    let operations = 0;
    for (let step = 0; step < STEPS; step++) {
      const at = new Date(now);
      const roll = r.next();
      const ctx = `seed ${SEED} step ${step}`;
      if (roll < 0.1) {
        // the sweeper: every hold past its expiry (a crashed caller's), and no other, is expired
        const due = holds.filter((h) => h.status === 'held' && h.expiresAt <= now);
        const expired = await b.sweeper.sweep(at);
        expect(expired, ctx).toBe(due.length);
        for (const h of due) releaseInModel(accounts, h, 'expired');
        count('sweep');
        operations++;
      } else if (roll < 0.25) {
        now += r.int(1, 6 * 3600) * 1000; // time passes: days and weekly resets go by
        count('time');
        continue;
      } else {
        // One operation per account, all at once: accounts are independent, so the model's
        // expectations stay exact while the database sees concurrent transactions.
        const acting = accounts.filter(() => r.next() < 0.8);
        await Promise.all(acting.map((a) => operate(a, at, ctx).then(() => void operations++)));
      }

      // After every step: the database's books balance and the model agrees with billing.
      expect(
        await unbalanced(
          b.sql,
          accounts.map((a) => a.id),
        ),
        ctx,
      ).toEqual([]);
      if (step % 25 === 0) {
        for (const acct of accounts) {
          const u = await b.usage.get(acct.id, at);
          for (const m of ['images', 'lookups'] as const) {
            const w = acct.weekly.get(`${weekStart(at).toISOString()}|${m}`);
            expect(u.allowances[m], `${ctx} ${m}`).toMatchObject({ used: w?.used ?? 0, held: w?.held ?? 0, allowance: w?.allowance ?? acct.plan.weekly[m] });
          }
          const d = acct.daily.get(utcDay(at).toISOString());
          expect(u.extra_usage.used_today, ctx).toBe((d?.used ?? 0) + (d?.held ?? 0));
        }
      }
    }
    expect(operations).toBeGreaterThan(2_000);
    // The run exercised every path, not just the easy ones.
    for (const k of [
      'hold:ok',
      'hold:weekly_allowance_reached',
      'hold:daily_ceiling_reached',
      'hold:plan_required',
      'hold:idempotency_conflict',
      'settle:ok',
      'settle:hold_already_resolved',
      'release:ok',
      'release:hold_not_found',
      'sweep',
      'time',
    ]) {
      expect(stats[k] ?? 0, `${k} never happened: ${JSON.stringify(stats)}`).toBeGreaterThan(0);
    }
    expect(holds.some((h) => h.status === 'expired')).toBe(true);
  }, 300_000);
});

function releaseInModel(accounts: ModelAccount[], h: ModelHold, status: 'released' | 'expired') {
  const acct = accounts.find((a) => a.id === h.account)!;
  acct.weekly.get(`${h.week}|${h.meter}`)!.held -= h.plan;
  if (h.extra) acct.daily.get(h.day)!.held -= h.extra;
  h.status = status;
}
