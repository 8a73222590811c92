import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, type RpcEntry } from '@drael/contracts';
import { wireSubject } from '@drael/nats-rpc';
import { newAccount, startBilling, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

/** A request sent around the typed client, as any NATS caller could: only billing's own checks stand. */
async function raw(entry: RpcEntry, data: unknown): Promise<{ result?: unknown; error?: { code: string; details?: { param?: string } } }> {
  const packet = { pattern: entry.subject, id: `raw-${Math.random()}`, data };
  const msg = await b.client.connection.request(wireSubject(entry.subject, b.prefix), JSON.stringify(packet), { timeout: 30_000 });
  return msg.json<{ response: { result?: unknown; error?: { code: string; details?: { param?: string } } } }>().response;
}

describe('idempotent wallet credit (Stripe semantics)', () => {
  it('the same key and amount credits once and answers the first wallet; another amount is 409 idempotency_key_reused', async () => {
    const acct = await newAccount(b);
    const first = await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000, idempotency_key: 'top-up-1' });
    expect(first.balance_micros).toBe(1_000);
    // Repeats, concurrently too: still one credit, each answered as the first was.
    const repeats = await Promise.all(Array.from({ length: 5 }, () => b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000, idempotency_key: 'top-up-1' })));
    for (const r of repeats) expect(r).toEqual(first);
    await expect(b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 2_000, idempotency_key: 'top-up-1' })).rejects.toMatchObject({
      code: 'idempotency_key_reused',
    });
    expect((await b.rpc(billingCatalog.wallet, { account_id: acct })).balance_micros).toBe(1_000);
    // Another key is another credit; no key, always a credit.
    await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000, idempotency_key: 'top-up-2' });
    await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000 });
    await b.rpc(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000 });
    expect((await b.rpc(billingCatalog.wallet, { account_id: acct })).balance_micros).toBe(4_000);
  });

  it('keys are per account: another account may use the same key', async () => {
    const [a1, a2] = [await newAccount(b), await newAccount(b)];
    await b.rpc(billingCatalog.creditWallet, { account_id: a1, amount_micros: 10, idempotency_key: 'same' });
    expect((await b.rpc(billingCatalog.creditWallet, { account_id: a2, amount_micros: 99, idempotency_key: 'same' })).balance_micros).toBe(99);
  });
});

describe('hostile input over NATS: a typed bad_request naming the field, never internal', () => {
  it('numbers beyond what the columns hold', async () => {
    const acct = await newAccount(b);
    for (const per_minute of [2 ** 31, 1e12]) {
      const res = await raw(billingCatalog.createKey, { account_id: acct, rate_limit: { per_minute, per_hour: 100 } });
      expect(res.error).toMatchObject({ code: 'bad_request', details: { param: 'rate_limit.per_minute' } });
    }
    expect((await raw(billingCatalog.createKey, { account_id: acct, rate_limit: { per_minute: 10, per_hour: 2 ** 31 } })).error).toMatchObject({
      code: 'bad_request',
      details: { param: 'rate_limit.per_hour' },
    });
    expect((await raw(billingCatalog.createAccount, { name: 'x', extra_usage: { enabled: true, daily_ceiling: 2 ** 31 } })).error).toMatchObject({
      code: 'bad_request',
      details: { param: 'extra_usage.daily_ceiling' },
    });
    expect((await raw(billingCatalog.setAgentLimits, { account_id: acct, agent_steps_per_minute: 2 ** 31 })).error?.code).toBe('bad_request');
    // The largest values allowed are stored.
    expect((await raw(billingCatalog.createKey, { account_id: acct, rate_limit: { per_minute: 1_000_000, per_hour: 100_000_000 } })).result).toBeDefined();
  });

  it('NUL and lone surrogates in names, plans, ids and keys', async () => {
    const acct = await newAccount(b);
    const cases: Array<[RpcEntry, unknown, string]> = [
      [billingCatalog.createAccount, { name: 'a\u0000b' }, 'name'],
      [billingCatalog.createAccount, { name: 'ok', plan: 'pro\u0000' }, 'plan'],
      [billingCatalog.createAccount, { name: 'bad \uD800 surrogate' }, 'name'],
      [billingCatalog.createKey, { account_id: acct, name: 'k\u0000' }, 'name'],
      [billingCatalog.createKey, { account_id: `${acct}\u0000` }, 'account_id'],
      [billingCatalog.revokeKey, { account_id: acct, key_id: '\u0000' }, 'key_id'],
      [billingCatalog.creditWallet, { account_id: acct, amount_micros: 1, idempotency_key: 'k\u0000' }, 'idempotency_key'],
      [billingCatalog.reserveSpend, { account_id: acct, run_id: 'r\u0000', kind: 'inference.chat', amount_micros: 1, idempotency_key: 'x' }, 'run_id'],
      [billingCatalog.hold, { account_id: acct, tool: 'generate_image', units: 1, idempotency_key: '\u0000' }, 'idempotency_key'],
    ];
    for (const [entry, data, param] of cases) {
      const res = await raw(entry, data);
      expect(res.error, `${entry.subject} ${param}`).toMatchObject({ code: 'bad_request', details: { param } });
    }
  });

  it('a plan name of a megabyte is refused by the schema, not carried to the database', async () => {
    expect((await b.rpc(billingCatalog.createAccount, { name: 'x', plan: 'p'.repeat(65) }).catch((e: unknown) => e)) as { code: string }).toMatchObject({
      code: 'bad_request',
    });
  });
});
