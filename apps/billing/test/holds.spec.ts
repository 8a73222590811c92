import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { wireSubject } from '@drael/nats-rpc';
import { PLANS } from '../src/plans/plans.js';
import { codes, leaveRemaining, newAccount, startBilling, unbalanced, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

const hold = (account_id: string, units: number, idempotency_key: string, tool: 'generate_image' | 'contact_lookup' | 'breach_lookup' = 'generate_image') =>
  b.rpc(billingCatalog.hold, { account_id, tool, units, idempotency_key });

describe('holds against the weekly allowance (real PostgreSQL, concurrent NATS requests)', () => {
  it('100 concurrent holds of 1 against an allowance of 10: exactly 10 succeed', async () => {
    const acct = await newAccount(b);
    await leaveRemaining(b, acct, 'generate_image', 10);
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => hold(acct, 1, `k${i}`)));
    expect(codes(results)).toEqual({ ok: 10, weekly_allowance_reached: 90 });
    const u = await b.usage.get(acct);
    expect(u.allowances.images.held).toBe(10);
    expect(u.allowances.images.used + u.allowances.images.held).toBe(u.allowances.images.allowance);
    expect(await unbalanced(b.sql)).toEqual([]);
  });

  it('the same with extra usage on and a daily ceiling of 5: exactly 15 succeed', async () => {
    const acct = await newAccount(b, 'pro', { daily_ceiling: 5 });
    await leaveRemaining(b, acct, 'generate_image', 10);
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => hold(acct, 1, `k${i}`)));
    expect(codes(results)).toEqual({ ok: 15, daily_ceiling_reached: 85 });
    const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(held.filter((h) => h.extra_units === 1)).toHaveLength(5);
    const u = await b.usage.get(acct);
    expect(u.extra_usage).toMatchObject({ enabled: true, daily_ceiling: 5, used_today: 5 });
    expect(u.allowances.images.extra).toBe(5);
    expect(await unbalanced(b.sql)).toEqual([]);
  });

  it('100 concurrent holds of 3 against 10: exactly 3 succeed (no partial hold)', async () => {
    const acct = await newAccount(b);
    await leaveRemaining(b, acct, 'generate_image', 10);
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => hold(acct, 3, `k${i}`)));
    expect(codes(results)).toEqual({ ok: 3, weekly_allowance_reached: 97 });
    expect((await b.usage.get(acct)).allowances.images.held).toBe(9);
  });

  it('50 concurrent settles of one hold: exactly one settles', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 4, 'once');
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 4 })));
    expect(codes(results)).toEqual({ ok: 1, hold_already_resolved: 49 });
    const u = await b.usage.get(acct);
    expect(u.allowances.images).toMatchObject({ used: 4, held: 0 });
  });

  it('settle and release are sent again by the typed client when their replica dies mid-request (chaos run: a paid call the client saw charged was not), which the exactly-once resolution makes safe', async () => {
    expect(billingCatalog.settle.idempotent).toBe(true);
    expect(billingCatalog.release.idempotent).toBe(true);
    const acct = await newAccount(b);
    const h = await hold(acct, 2, 'sent-twice');
    await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 2 });
    await expect(b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 2 })).rejects.toMatchObject({ code: 'hold_already_resolved' });
    await expect(b.rpc(billingCatalog.release, { account_id: acct, hold_id: h.hold_id })).rejects.toMatchObject({ code: 'hold_already_resolved' });
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 2, held: 0 });
  });

  it('settle and release racing: exactly one wins, and the books follow the winner', async () => {
    const acct = await newAccount(b);
    for (let i = 0; i < 20; i++) {
      const h = await hold(acct, 2, `race-${i}`);
      const results = await Promise.allSettled([
        b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 2 }),
        b.rpc(billingCatalog.release, { account_id: acct, hold_id: h.hold_id }),
      ]);
      expect(codes(results)).toEqual({ ok: 1, hold_already_resolved: 1 });
    }
    const settled = await b.sql.query(`SELECT count(*)::int AS n FROM holds WHERE account_id = $1 AND status = 'settled'`, [acct]);
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 2 * (settled.rows[0] as { n: number }).n, held: 0 });
    expect(await unbalanced(b.sql)).toEqual([]);
  });

  it('sweeper against settle: exactly one resolves the hold', async () => {
    const acct = await newAccount(b);
    for (let i = 0; i < 10; i++) {
      const h = await b.rpc(billingCatalog.hold, { account_id: acct, tool: 'generate_image', units: 1, idempotency_key: `sw-${i}`, ttl_s: 1 });
      const later = new Date(Date.parse(h.expires_at) + 1_000);
      const [settle, expired] = await Promise.allSettled([
        b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 1 }),
        b.holds.expire(h.hold_id, acct, later),
      ]);
      const settleWon = settle.status === 'fulfilled';
      const sweepWon = expired.status === 'fulfilled' && expired.value;
      expect(settleWon !== sweepWon).toBe(true);
      if (!settleWon) expect(settle.reason).toMatchObject({ code: 'hold_already_resolved' });
    }
    expect(await unbalanced(b.sql)).toEqual([]);
  });

  it('50 concurrent holds with one idempotency key: one hold, counted once', async () => {
    const acct = await newAccount(b);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => hold(acct, 2, 'same-key')));
    expect(codes(results)).toEqual({ ok: 50 });
    const ids = new Set(results.map((r) => (r as PromiseFulfilledResult<{ hold_id: string }>).value.hold_id));
    expect(ids.size).toBe(1);
    expect((await b.usage.get(acct)).allowances.images.held).toBe(2);
    // A retry after settling still returns the same (now settled) hold, and charges nothing more.
    const [id] = [...ids];
    await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: id!, units: 2 });
    const again = await hold(acct, 2, 'same-key');
    expect(again).toMatchObject({ hold_id: id, status: 'settled' });
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 2, held: 0 });
  });

  it('the same idempotency key with another amount is refused', async () => {
    const acct = await newAccount(b);
    await hold(acct, 2, 'amount');
    await expect(hold(acct, 3, 'amount')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    await expect(hold(acct, 2, 'amount', 'contact_lookup')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    expect((await b.usage.get(acct)).allowances.images.held).toBe(2);
  });

  it('a tool that fails before running is released: nothing charged', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 3, 'fails');
    const released = await b.rpc(billingCatalog.release, { account_id: acct, hold_id: h.hold_id });
    expect(released).toMatchObject({ status: 'released', settled_units: null });
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 0, held: 0 });
  });

  it('a contact lookup holding 10 and returning 3 plain + 2 premium settles 7', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 10, 'contacts', 'contact_lookup');
    const s = await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, contacts: { plain: 3, premium: 2 } });
    expect(s).toMatchObject({ status: 'settled', settled_units: 7 });
    expect((await b.usage.get(acct)).allowances.lookups).toMatchObject({ used: 7, held: 0 });
  });

  it('a settle above the hold is capped at the hold', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 2, 'cap');
    const s = await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 50 });
    expect(s.settled_units).toBe(2);
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 2, held: 0 });
  });

  it('plan_required answers before any row is written', async () => {
    const acct = await newAccount(b, 'free');
    expect(PLANS.find((p) => p.id === 'free')!.tools).not.toContain('contact_lookup');
    await expect(hold(acct, 1, 'nope', 'contact_lookup')).rejects.toMatchObject({ code: 'plan_required' });
    await expect(hold(acct, 1, 'nope2', 'breach_lookup')).rejects.toMatchObject({ code: 'plan_required' });
    const rows = await b.sql.query(
      `SELECT (SELECT count(*) FROM holds WHERE account_id = $1)::int + (SELECT count(*) FROM weekly_allowances WHERE account_id = $1)::int
              + (SELECT count(*) FROM daily_extras WHERE account_id = $1)::int AS n`,
      [acct],
    );
    expect(rows.rows[0]).toEqual({ n: 0 });
  });

  it('holds around the weekly reset count in exactly one week', async () => {
    const acct = await newAccount(b);
    const images = PLANS.find((p) => p.id === 'pro')!.weekly.images;
    b.clock.set('2026-11-29T23:59:59.500Z'); // Sunday, the last half second of a week
    try {
      const before = await b.holds.hold({ account_id: acct, tool: 'generate_image', units: 3, idempotency_key: 'eow', ttl_s: 300 });
      b.clock.set('2026-11-30T00:00:00.200Z'); // Monday: a new week
      const after = await b.holds.hold({ account_id: acct, tool: 'generate_image', units: 2, idempotency_key: 'sow', ttl_s: 300 });
      // The Sunday hold settles on Monday: it still counts in the week it was held in.
      await b.holds.settle({ account_id: acct, hold_id: before.hold_id, units: 3 });
      await b.holds.settle({ account_id: acct, hold_id: after.hold_id, units: 2 });
      const lastWeek = await b.usage.get(acct, new Date('2026-11-29T12:00:00Z'));
      const thisWeek = await b.usage.get(acct, new Date('2026-11-30T12:00:00Z'));
      expect(lastWeek).toMatchObject({ week_start: '2026-11-23T00:00:00.000Z', allowances: { images: { allowance: images, used: 3, held: 0 } } });
      expect(thisWeek).toMatchObject({ week_start: '2026-11-30T00:00:00.000Z', allowances: { images: { allowance: images, used: 2, held: 0 } } });
    } finally {
      b.clock.t = Date.now();
    }
  });

  it('cross-account: another account cannot settle, release or read a hold, nor revoke a key', async () => {
    const a = await newAccount(b);
    const other = await newAccount(b);
    const h = await hold(a, 1, 'mine');
    await expect(b.rpc(billingCatalog.settle, { account_id: other, hold_id: h.hold_id, units: 1 })).rejects.toMatchObject({ code: 'hold_not_found' });
    await expect(b.rpc(billingCatalog.release, { account_id: other, hold_id: h.hold_id })).rejects.toMatchObject({ code: 'hold_not_found' });
    // Retrying the owner's idempotency key from the other account makes a hold of the other account.
    const theirs = await hold(other, 1, 'mine');
    expect(theirs.hold_id).not.toBe(h.hold_id);
    expect(theirs.account_id).toBe(other);
    const key = await b.rpc(billingCatalog.createKey, { account_id: a, tool_level: 'l1_http' });
    await expect(b.rpc(billingCatalog.revokeKey, { account_id: other, key_id: key.key_id })).rejects.toMatchObject({ code: 'key_not_found' });
    expect(await b.rpc(billingCatalog.verifyKey, { api_key: key.api_key })).toMatchObject({ account_id: a });
    expect((await b.usage.get(a)).allowances.images.held).toBe(1);
  });

  it('unknown accounts and holds', async () => {
    await expect(hold('00000000-0000-4000-8000-000000000000', 1, 'x')).rejects.toMatchObject({ code: 'account_not_found' });
    await expect(hold('not-a-uuid', 1, 'x')).rejects.toMatchObject({ code: 'account_not_found' });
    const acct = await newAccount(b);
    await expect(b.rpc(billingCatalog.release, { account_id: acct, hold_id: 'nope' })).rejects.toMatchObject({ code: 'hold_not_found' });
  });

  it('the database itself refuses an overdraft or a second resolution', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 1, 'db');
    await expect(b.sql.query(`UPDATE weekly_allowances SET held = allowance + 1 WHERE account_id = $1`, [acct])).rejects.toThrow(/weekly_allowances_within/);
    await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 1 });
    await expect(b.sql.query(`UPDATE holds SET status = 'held', resolved_at = NULL, settled_units = NULL WHERE id = $1`, [h.hold_id])).rejects.toThrow(/already settled/);
  });
});

// Attack F5: the gateway never heard a create's answer (a lost reply, a timeout, a client that hung
// up), so it has no hold id; it releases by the create's idempotency key. The create may land
// before or after that release, or at the same moment: in every order no hold stays held.
describe('release by idempotency key (a create whose answer was lost)', () => {
  const byKey = (account_id: string, units: number, idempotency_key: string, tool: 'generate_image' | 'contact_lookup' | 'breach_lookup' = 'generate_image') =>
    b.rpc(billingCatalog.releaseByKey, { account_id, tool, units, idempotency_key });

  it('the create landed first: its hold is released and its units return; a repeat answers the released hold', async () => {
    expect(billingCatalog.releaseByKey.idempotent).toBe(true);
    const acct = await newAccount(b);
    const h = await hold(acct, 2, 'landed');
    expect((await b.usage.get(acct)).allowances.images.held).toBe(2);
    expect(await byKey(acct, 2, 'landed')).toMatchObject({ hold_id: h.hold_id, status: 'released', settled_units: null });
    expect(await byKey(acct, 2, 'landed')).toMatchObject({ hold_id: h.hold_id, status: 'released' });
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 0, held: 0 });
    expect(await unbalanced(b.sql, [acct])).toEqual([]);
  });

  it('a create arriving after the release takes nothing: it answers the released hold, also for an account at its last unit', async () => {
    const acct = await newAccount(b);
    await leaveRemaining(b, acct, 'generate_image', 1);
    const tombstone = await byKey(acct, 1, 'late');
    expect(tombstone).toMatchObject({ status: 'released', units: 1 });
    const late = await hold(acct, 1, 'late');
    expect(late).toMatchObject({ hold_id: tombstone.hold_id, status: 'released' });
    expect((await b.usage.get(acct)).allowances.images.held).toBe(0);
    // The last unit is still there for the next call.
    expect(await hold(acct, 1, 'next')).toMatchObject({ status: 'held' });
    expect(await unbalanced(b.sql, [acct])).toEqual([]);
  });

  it('create and release racing, 30 times: never a hold left held, the books balance', async () => {
    const acct = await newAccount(b, 'pro', { daily_ceiling: 100 });
    for (let i = 0; i < 30; i++) {
      const [created, released] = await Promise.allSettled([hold(acct, 1, `race-${i}`), byKey(acct, 1, `race-${i}`)]);
      expect(released.status).toBe('fulfilled');
      if (created.status === 'rejected') throw created.reason;
      expect(created.value.hold_id).toBe((released as PromiseFulfilledResult<{ hold_id: string }>).value.hold_id);
    }
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 0, held: 0 });
    const open = await b.sql.query(`SELECT count(*)::int AS n FROM holds WHERE account_id = $1 AND status = 'held'`, [acct]);
    expect((open.rows[0] as { n: number }).n).toBe(0);
    expect(await unbalanced(b.sql, [acct])).toEqual([]);
  });

  it('leaves a settled hold as it is, refuses another amount under the key, and answers unknown accounts', async () => {
    const acct = await newAccount(b);
    const h = await hold(acct, 2, 'settled');
    await b.rpc(billingCatalog.settle, { account_id: acct, hold_id: h.hold_id, units: 2 });
    expect(await byKey(acct, 2, 'settled')).toMatchObject({ hold_id: h.hold_id, status: 'settled', settled_units: 2 });
    await hold(acct, 2, 'other');
    await expect(byKey(acct, 3, 'other')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    await expect(byKey(acct, 2, 'other', 'breach_lookup')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ used: 2, held: 2 });
    await expect(byKey('00000000-0000-4000-8000-000000000000', 1, 'x')).rejects.toMatchObject({ code: 'account_not_found' });
    await expect(byKey('not-a-uuid', 1, 'x')).rejects.toMatchObject({ code: 'account_not_found' });
  });

  it('a hostile payload is a bad_request naming the field', async () => {
    const acct = await newAccount(b);
    for (const [data, param] of [
      [{ account_id: acct, tool: 'generate_image', units: 2 ** 31, idempotency_key: 'k' }, 'units'],
      [{ account_id: acct, tool: 'generate_image', units: 1, idempotency_key: 'k\u0000' }, 'idempotency_key'],
      [{ account_id: acct, tool: 'run_code', units: 1, idempotency_key: 'k' }, 'tool'],
    ] as const) {
      const packet = { pattern: billingCatalog.releaseByKey.subject, id: `raw-${Math.random()}`, data };
      const msg = await b.client.connection.request(wireSubject(billingCatalog.releaseByKey.subject, b.prefix), JSON.stringify(packet), { timeout: 30_000 });
      expect(msg.json<{ response: { error?: unknown } }>().response.error).toMatchObject({ code: 'bad_request', details: { param } });
    }
  });
});

describe('plans and extra usage', () => {
  it('lists the plans with an ETag that is stable', async () => {
    const a = await b.rpc(billingCatalog.listPlans, {});
    const c = await b.rpc(billingCatalog.listPlans, {});
    expect(a.plans.map((p) => p.id)).toEqual(PLANS.map((p) => p.id));
    expect(a.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(c.etag).toBe(a.etag);
  });

  it('unknown plan is refused; extra usage can be turned on later', async () => {
    await expect(b.rpc(billingCatalog.createAccount, { name: 'x', plan: 'platinum' })).rejects.toMatchObject({ code: 'plan_not_found' });
    const acct = await newAccount(b);
    await leaveRemaining(b, acct, 'generate_image', 0);
    await expect(hold(acct, 1, 'e1')).rejects.toMatchObject({ code: 'weekly_allowance_reached' });
    await b.rpc(billingCatalog.setExtraUsage, { account_id: acct, enabled: true, daily_ceiling: 2 });
    await hold(acct, 2, 'e2');
    await expect(hold(acct, 1, 'e3')).rejects.toMatchObject({ code: 'daily_ceiling_reached' });
  });
});
