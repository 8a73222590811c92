import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { codes, newAccount, startBilling, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

const credit = (account_id: string, amount_micros: number, idempotency_key?: string) =>
  b.rpc(billingCatalog.creditWallet, { account_id, amount_micros, ...(idempotency_key ? { idempotency_key } : {}) });

describe('billing.wallet.credit.v1 with an idempotency key (the console credits with one)', () => {
  it('credits once per key, however often and however concurrently it is retried', async () => {
    const acct = await newAccount(b);
    expect((await credit(acct, 1_000_000, 'top-up-1')).balance_micros).toBe(1_000_000);
    expect((await credit(acct, 1_000_000, 'top-up-1')).balance_micros).toBe(1_000_000);
    const racing = await Promise.allSettled(Array.from({ length: 10 }, () => credit(acct, 500_000, 'top-up-2')));
    expect(codes(racing)).toEqual({ ok: 10 });
    expect((await b.rpc(billingCatalog.wallet, { account_id: acct })).balance_micros).toBe(1_500_000);
    // Without a key every call credits; a key is the account's own.
    await credit(acct, 1, undefined);
    await credit(acct, 1, undefined);
    const other = await newAccount(b);
    expect((await credit(other, 7, 'top-up-1')).balance_micros).toBe(7);
    expect((await b.rpc(billingCatalog.wallet, { account_id: acct })).balance_micros).toBe(1_500_002);
  });

  it('refuses the same key with another amount, and an unknown account', async () => {
    const acct = await newAccount(b);
    await credit(acct, 100, 'k');
    await expect(credit(acct, 200, 'k')).rejects.toMatchObject({ code: 'idempotency_conflict' });
    expect((await b.rpc(billingCatalog.wallet, { account_id: acct })).balance_micros).toBe(100);
    await expect(credit('00000000-0000-4000-8000-000000000000', 100, 'k')).rejects.toMatchObject({ code: 'account_not_found' });
  });
});
