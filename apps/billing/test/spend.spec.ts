import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicKey, verify } from 'node:crypto';
import { billingCatalog, type ReceiptPayload } from '@drael/contracts';
import { canonicalBytes, chainHead, keccak256Hex, ReceiptSigner, ZERO_HEAD } from '@drael/receipts';
import { SpendRepository } from '../src/spend/spend.repository.js';
import { SpendService } from '../src/spend/spend.service.js';
import { codes, newAccount, startBilling, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

// An Ed25519 public key (raw, hex) as node:crypto takes it: the fixed SPKI DER prefix and the 32 bytes (RFC 8410).
const ed25519Verify = (signatureHex: string, message: Uint8Array, publicKeyHex: string) =>
  verify(
    null,
    message,
    createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' }),
    Buffer.from(signatureHex, 'hex'),
  );
const fp = (s: string) => keccak256Hex(new TextEncoder().encode(s));
let keySeq = 0;
const reserve = (account_id: string, amount_micros: number, run_id = 'run_a', kind: 'inference.chat' | 'sandbox.execute' = 'inference.chat', idempotency_key = `r${++keySeq}`) =>
  b.rpc(billingCatalog.reserveSpend, { account_id, run_id, kind, amount_micros, idempotency_key });
const receiptFields = (run_id: string, sequence: number, previous: string | null) => ({
  usage: { prompt_tokens: 10, completion_tokens: 2 },
  input_fingerprint: fp(`in${sequence}`),
  output_fingerprint: fp(`out${sequence}`),
  run: { id: run_id, sequence, previous_receipt_hash: previous },
});
const settle = (
  account_id: string,
  hold_id: string,
  amount_micros: number,
  run_id: string,
  sequence: number,
  previous: string | null,
  kind: 'inference.chat' | 'sandbox.execute' = 'inference.chat',
) => b.rpc(billingCatalog.settleSpend, { account_id, hold_id, kind, amount_micros, receipt: receiptFields(run_id, sequence, previous) });
const wallet = (account_id: string) => b.rpc(billingCatalog.wallet, { account_id });

async function funded(balance: number, limits: { monthly_budget_micros?: number | null; agent_steps_per_minute?: number } = {}): Promise<string> {
  const acct = await newAccount(b);
  if (balance > 0) await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: balance });
  // Generous step rate unless a test is about it.
  await b.rpc(billingCatalog.setAgentLimits, { account_id: acct, agent_steps_per_minute: 100_000, ...limits });
  return acct;
}

/** Every wallet's held equals its open spend holds, spent equals its settled ones; none past its bounds. */
async function unbalancedWallets(accounts: string[]): Promise<unknown[]> {
  const { rows } = await b.sql.query(
    `SELECT a.id, a.balance_micros, a.held_micros,
            COALESCE((SELECT SUM(amount_micros) FROM spend_holds s WHERE s.account_id = a.id AND s.status = 'held'), 0) AS exp_held,
            m.spent_micros, m.held_micros AS month_held, m.budget_micros,
            COALESCE((SELECT SUM(settled_micros) FROM spend_holds s WHERE s.account_id = a.id AND s.status = 'settled' AND s.month = m.month), 0) AS exp_spent
       FROM accounts a LEFT JOIN monthly_spend m ON m.account_id = a.id
      WHERE a.id = ANY($1::uuid[])`,
    [accounts],
  );
  return rows.filter(
    (r) =>
      BigInt(r.held_micros) !== BigInt(r.exp_held) ||
      BigInt(r.held_micros) > BigInt(r.balance_micros) ||
      (r.spent_micros !== null && BigInt(r.spent_micros) !== BigInt(r.exp_spent)) ||
      (r.budget_micros !== null && BigInt(r.spent_micros) + BigInt(r.month_held) > BigInt(r.budget_micros)),
  );
}

describe('agent spend: reservations against the balance (real PostgreSQL, concurrent NATS requests)', () => {
  it('100 concurrent reservations of 10 µ$ against a balance of 95 µ$: exactly 9 succeed, never an overdraft', async () => {
    const acct = await funded(95);
    const results = await Promise.allSettled(Array.from({ length: 100 }, () => reserve(acct, 10)));
    expect(codes(results)).toEqual({ ok: 9, insufficient_balance: 91 });
    expect(await wallet(acct)).toMatchObject({ balance_micros: 95, held_micros: 90, available_micros: 5 });
    expect(await unbalancedWallets([acct])).toEqual([]);
  });

  it('settles with the actual cost (never above the reservation), releases the rest, and the balance pays only what ran', async () => {
    const acct = await funded(1_000);
    const a = await reserve(acct, 300, 'run_s');
    const c = await reserve(acct, 300, 'run_s', 'sandbox.execute');
    const settled = await settle(acct, a.hold_id, 120, 'run_s', 0, null);
    expect(settled.hold).toMatchObject({ status: 'settled', settled_micros: 120, amount_micros: 300 });
    expect(settled.receipt.payload).toMatchObject({ account_id: acct, kind: 'inference.chat', cost_micros: 120, run: { id: 'run_s', sequence: 0, previous_receipt_hash: null } });
    // A cost above the reservation, or a kind other than the hold's, is refused and charges nothing.
    await expect(settle(acct, c.hold_id, 301, 'run_s', 1, settled.receipt.hash, 'sandbox.execute')).rejects.toMatchObject({ code: 'bad_request' });
    await expect(settle(acct, c.hold_id, 300, 'run_s', 1, settled.receipt.hash, 'inference.chat')).rejects.toMatchObject({ code: 'bad_request' });
    expect((await wallet(acct)).balance_micros).toBe(1_000 - 120);
    const over = await settle(acct, c.hold_id, 300, 'run_s', 1, settled.receipt.hash, 'sandbox.execute');
    expect(over.hold.settled_micros).toBe(300);
    expect(over.receipt.payload).toMatchObject({ kind: 'sandbox.execute', cost_micros: 300 });
    const d = await reserve(acct, 200, 'run_s');
    expect((await b.rpc(billingCatalog.releaseSpend, { account_id: acct, hold_id: d.hold_id })).status).toBe('released');
    expect(await wallet(acct)).toMatchObject({ balance_micros: 580, held_micros: 0, spent_this_month_micros: 420 });
    // A released hold is not settled afterwards, and a second release answers as the first.
    await expect(settle(acct, d.hold_id, 1, 'run_s', 2, over.receipt.hash)).rejects.toMatchObject({ code: 'hold_already_resolved' });
    expect((await b.rpc(billingCatalog.releaseSpend, { account_id: acct, hold_id: d.hold_id })).status).toBe('released');
    expect(await unbalancedWallets([acct])).toEqual([]);
  });

  it('issues Ed25519-signed receipts under its public key; a repeated settle returns the same receipt and charges once', async () => {
    const acct = await funded(1_000);
    const key = await b.rpc(billingCatalog.receiptKey, {});
    const signing = { key_id: 'k1', public_key: new ReceiptSigner(b.receiptKey, 'k1').publicKey, algorithm: 'ed25519' };
    expect(key).toEqual({ ...signing, keys: [signing] });
    const h = await reserve(acct, 100, 'run_sig');
    const first = await settle(acct, h.hold_id, 40, 'run_sig', 0, null);
    const again = await settle(acct, h.hold_id, 40, 'run_sig', 0, null);
    expect(again.receipt).toEqual(first.receipt);
    const bytes = canonicalBytes(first.receipt.payload);
    expect(first.receipt.hash).toBe(keccak256Hex(bytes));
    expect(ed25519Verify(first.receipt.signature, bytes, key.public_key)).toBe(true);
    const forged: ReceiptPayload = { ...first.receipt.payload, cost_micros: 1 };
    expect(ed25519Verify(first.receipt.signature, canonicalBytes(forged), key.public_key)).toBe(false);
    expect((await wallet(acct)).balance_micros).toBe(960);
  });

  it('reserves and settles of one account interleaved at concurrency 40 all succeed (one lock order, no deadlock) and the books balance', async () => {
    const acct = await funded(1_000_000);
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, async (_, i) => {
        const h = await reserve(acct, 1_000, `run_lock_${i}`);
        await settle(acct, h.hold_id, 10, `run_lock_${i}`, 0, null);
        const h2 = await reserve(acct, 1_000, `run_lock_${i}`, 'sandbox.execute');
        await b.rpc(billingCatalog.releaseSpend, { account_id: acct, hold_id: h2.hold_id });
      }),
    );
    expect(codes(results)).toEqual({ ok: 40 });
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000_000 - 400, held_micros: 0, spent_this_month_micros: 400 });
    expect(await unbalancedWallets([acct])).toEqual([]);
  });

  it('a repeated reservation with one idempotency key holds once; another amount under that key is a conflict', async () => {
    const acct = await funded(1_000);
    const [x, y] = await Promise.all([reserve(acct, 100, 'run_i', 'inference.chat', 'same'), reserve(acct, 100, 'run_i', 'inference.chat', 'same')]);
    expect(x.hold_id).toBe(y.hold_id);
    expect((await wallet(acct)).held_micros).toBe(100);
    await expect(reserve(acct, 101, 'run_i', 'inference.chat', 'same')).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('keeps the receipt chain: each receipt must link to the one billing issued before it, one per place', async () => {
    const acct = await funded(10_000);
    const h0 = await reserve(acct, 10, 'run_c');
    const h1 = await reserve(acct, 10, 'run_c');
    const h2 = await reserve(acct, 10, 'run_c');
    // Sequence 1 before sequence 0 exists, and a first receipt that links to something, are refused.
    await expect(settle(acct, h1.hold_id, 5, 'run_c', 1, 'ab'.repeat(32))).rejects.toMatchObject({ code: 'receipt_chain_mismatch' });
    await expect(settle(acct, h0.hold_id, 5, 'run_c', 0, 'ab'.repeat(32))).rejects.toMatchObject({ code: 'receipt_chain_mismatch' });
    const r0 = await settle(acct, h0.hold_id, 5, 'run_c', 0, null);
    // A second receipt at sequence 0, and a wrong link at 1, are refused; nothing was charged for them.
    await expect(settle(acct, h1.hold_id, 5, 'run_c', 0, null)).rejects.toMatchObject({ code: 'receipt_chain_mismatch' });
    await expect(settle(acct, h1.hold_id, 5, 'run_c', 1, 'cd'.repeat(32))).rejects.toMatchObject({ code: 'receipt_chain_mismatch' });
    const r1 = await settle(acct, h1.hold_id, 5, 'run_c', 1, r0.receipt.hash);
    // Another run's receipt cannot be settled on this run's hold.
    await expect(settle(acct, h2.hold_id, 5, 'run_other', 0, null)).rejects.toMatchObject({ code: 'bad_request' });
    expect((await wallet(acct)).balance_micros).toBe(10_000 - 10);

    // The run end is signed only over receipts billing issued: the full chain or a prefix of it.
    const head = chainHead([r0.receipt.hash, r1.receipt.hash]);
    const end = await b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_c', receipt_count: 2, receipt_head: head });
    expect(end.payload).toEqual({ version: 1, type: 'run_end', run_id: 'run_c', receipt_count: 2, receipt_head: head });
    const key = await b.rpc(billingCatalog.receiptKey, {});
    expect(ed25519Verify(end.signature, canonicalBytes(end.payload), key.public_key)).toBe(true);
    await b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_c', receipt_count: 1, receipt_head: chainHead([r0.receipt.hash]) });
    await b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_none', receipt_count: 0, receipt_head: ZERO_HEAD });
    for (const bad of [
      { receipt_count: 3, receipt_head: head },
      { receipt_count: 2, receipt_head: chainHead([r1.receipt.hash, r0.receipt.hash]) },
      { receipt_count: 1, receipt_head: head },
    ]) {
      await expect(b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_c', ...bad })).rejects.toMatchObject({ code: 'receipt_chain_mismatch' });
    }
    // Another account cannot get a run end over this account's receipts.
    const other = await funded(0);
    await expect(b.rpc(billingCatalog.signRunEnd, { account_id: other, run_id: 'run_c', receipt_count: 2, receipt_head: head })).rejects.toMatchObject({
      code: 'receipt_chain_mismatch',
    });
  });
});

describe('agent spend: a run that ends holds no money', () => {
  it("signing a run's end releases its reservations still held (a worker killed mid-operation), and only that run's", async () => {
    const acct = await funded(10_000);
    const done = await reserve(acct, 100, 'run_end_r');
    const r0 = await settle(acct, done.hold_id, 40, 'run_end_r', 0, null);
    // The operation in flight when its worker died: reserved, never settled or released.
    const open = await reserve(acct, 300, 'run_end_r', 'sandbox.execute');
    const otherRun = await reserve(acct, 200, 'run_end_other');
    expect(await wallet(acct)).toMatchObject({ balance_micros: 10_000 - 40, held_micros: 500 });

    await b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_end_r', receipt_count: 1, receipt_head: chainHead([r0.receipt.hash]) });
    // The run's open reservation returned at once (not after its ttl); the charge stays; the other run keeps its own.
    expect(await wallet(acct)).toMatchObject({ balance_micros: 10_000 - 40, held_micros: 200 });
    await expect(b.rpc(billingCatalog.releaseSpend, { account_id: acct, hold_id: open.hold_id })).resolves.toMatchObject({ status: 'released' });
    await expect(settle(acct, done.hold_id, 40, 'run_end_r', 0, null)).resolves.toMatchObject({ hold: { status: 'settled' } });
    await expect(b.rpc(billingCatalog.releaseSpend, { account_id: acct, hold_id: otherRun.hold_id })).resolves.toMatchObject({ status: 'released' });
    // Signed again (a retry): nothing changes.
    await b.rpc(billingCatalog.signRunEnd, { account_id: acct, run_id: 'run_end_r', receipt_count: 1, receipt_head: chainHead([r0.receipt.hash]) });
    expect(await wallet(acct)).toMatchObject({ balance_micros: 10_000 - 40, held_micros: 0 });
    expect(await unbalancedWallets([acct])).toEqual([]);
  });
});

describe('agent spend: the monthly budget and the step rate', () => {
  it('20 concurrent reservations of 10 µ$ under a monthly budget of 50 µ$: exactly 5 succeed; a new month starts afresh', async () => {
    const acct = await funded(1_000_000, { monthly_budget_micros: 50 });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => reserve(acct, 10)));
    expect(codes(results)).toEqual({ ok: 5, monthly_budget_reached: 15 });
    const held = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    // Settling below the reservation gives the rest back to the month.
    await settle(acct, held[0]!.hold_id, 4, 'run_a', 0, null);
    expect(await wallet(acct)).toMatchObject({ spent_this_month_micros: 4, held_this_month_micros: 40, monthly_budget_micros: 50 });
    await reserve(acct, 6);
    await expect(reserve(acct, 1)).rejects.toMatchObject({ code: 'monthly_budget_reached' });
    expect(await unbalancedWallets([acct])).toEqual([]);

    // Next calendar month (UTC): the budget applies to the new month's spend only.
    const saved = b.clock.t;
    try {
      const now = new Date(saved);
      b.clock.t = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1);
      const next = await b.spend.reserve({ account_id: acct, run_id: 'run_m', kind: 'inference.chat', amount_micros: 50, idempotency_key: 'next-month', ttl_s: 900 });
      expect(next.status).toBe('held');
      expect(await b.spend.wallet(acct)).toMatchObject({ spent_this_month_micros: 0, held_this_month_micros: 50 });
    } finally {
      b.clock.t = saved;
    }
  });

  it('lowering the budget below what the month spent stops further spend; null removes the cap', async () => {
    const acct = await funded(1_000, { monthly_budget_micros: 500 });
    const h = await reserve(acct, 300);
    await settle(acct, h.hold_id, 300, 'run_a', 0, null);
    const w = await b.rpc(billingCatalog.setAgentLimits, { account_id: acct, monthly_budget_micros: 100 });
    expect(w).toMatchObject({ monthly_budget_micros: 100, spent_this_month_micros: 300 });
    await expect(reserve(acct, 1)).rejects.toMatchObject({ code: 'monthly_budget_reached' });
    await b.rpc(billingCatalog.setAgentLimits, { account_id: acct, monthly_budget_micros: null });
    expect((await reserve(acct, 600)).status).toBe('held');
    await expect(reserve(acct, 200)).rejects.toMatchObject({ code: 'insufficient_balance' });
  });

  it("refuses operations past the account's steps per minute, with when to retry; the window slides", async () => {
    const acct = await funded(1_000_000, { agent_steps_per_minute: 3 });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => reserve(acct, 1)));
    expect(codes(results)).toEqual({ ok: 3, agent_rate_limited: 3 });
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    const retry = (refused.reason as { details?: { retry_after_ms?: number } }).details?.retry_after_ms ?? 0;
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60_000);
    // A minute later (billing's clock), the window is free again.
    const later = new Date(b.clock.t + 61_000);
    expect((await b.spend.reserve({ account_id: acct, run_id: 'run_a', kind: 'inference.chat', amount_micros: 1, idempotency_key: 'later', ttl_s: 900 }, later)).status).toBe(
      'held',
    );
  });

  it('without a receipt key, billing holds no money for an agent step and signs nothing (unavailable)', async () => {
    const acct = await funded(1_000);
    const keyless = new SpendService(b.running.app.get(SpendRepository), b.clock, null);
    const req = { account_id: acct, run_id: 'run_k', kind: 'inference.chat' as const, amount_micros: 10, idempotency_key: 'keyless', ttl_s: 900 };
    await expect(keyless.reserve(req)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    expect(() => keyless.publishedKeys()).toThrow(/BILLING_RECEIPT_KEY/);
    expect((await wallet(acct)).held_micros).toBe(0);
  });

  it('refuses an unknown account and money never moves for it', async () => {
    await expect(reserve('00000000-0000-4000-8000-000000000000', 1)).rejects.toMatchObject({ code: 'account_not_found' });
    await expect(b.rpc(billingCatalog.creditWallet, { account_id: 'nope', amount_micros: 1 })).rejects.toMatchObject({ code: 'account_not_found' });
  });
});

describe('agent spend: the database keeps the books', () => {
  it('the sweeper expires a stale spend hold and its money returns; a late settle then fails', async () => {
    const acct = await funded(1_000);
    const h = await b.rpc(billingCatalog.reserveSpend, { account_id: acct, run_id: 'run_x', kind: 'sandbox.execute', amount_micros: 700, idempotency_key: 'stale', ttl_s: 1 });
    expect((await wallet(acct)).available_micros).toBe(300);
    expect(await b.spendSweeper.sweep(new Date(b.clock.t + 2_000))).toBeGreaterThanOrEqual(1);
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000, held_micros: 0, held_this_month_micros: 0 });
    await expect(settle(acct, h.hold_id, 10, 'run_x', 0, null)).rejects.toMatchObject({ code: 'hold_already_resolved' });
    expect(await unbalancedWallets([acct])).toEqual([]);
  });

  it('CHECK constraints refuse an overdraft, a month past its budget and a changed resolved hold, whatever the code does', async () => {
    const acct = await funded(100, { monthly_budget_micros: 50 });
    const h = await reserve(acct, 40);
    await expect(b.sql.query('UPDATE accounts SET held_micros = 101 WHERE id = $1', [acct])).rejects.toThrow(/accounts_wallet_within/);
    await expect(b.sql.query('UPDATE accounts SET balance_micros = 39 WHERE id = $1', [acct])).rejects.toThrow(/accounts_wallet_within/);
    await expect(b.sql.query('UPDATE monthly_spend SET held_micros = 51 WHERE account_id = $1', [acct])).rejects.toThrow(/monthly_spend_within/);
    await settle(acct, h.hold_id, 40, 'run_a', 0, null);
    await expect(b.sql.query('UPDATE spend_holds SET settled_micros = 1 WHERE id = $1', [h.hold_id])).rejects.toThrow(/already settled/);
  });

  it('usage shows the balance and this month’s agent spend', async () => {
    const acct = await funded(2_000_000, { monthly_budget_micros: 1_500_000 });
    const h = await reserve(acct, 500_000, 'run_u');
    await settle(acct, h.hold_id, 250_000, 'run_u', 0, null);
    const u = await b.rpc(billingCatalog.usage, { account_id: acct });
    expect(u.agent_spend).toMatchObject({ balance_usd: 1.75, held_usd: 0, monthly_budget_usd: 1.5, spent_this_month_usd: 0.25, steps_per_minute: 100_000 });
  });
});
