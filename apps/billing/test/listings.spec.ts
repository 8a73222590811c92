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

describe('operator listings (the console: billing.accounts.list.v1, billing.keys.list.v1)', () => {
  it('lists accounts newest first in keyset pages', async () => {
    const made = [await newAccount(b), await newAccount(b), await newAccount(b)];
    const first = await b.rpc(billingCatalog.listAccounts, { limit: 2 });
    expect(first.accounts.map((a) => a.account_id)).toEqual([made[2], made[1]]);
    expect(first.has_more).toBe(true);
    expect(first.accounts[0]).toMatchObject({ plan: 'pro', extra_usage: { enabled: false, daily_ceiling: 0 } });
    const next = await b.rpc(billingCatalog.listAccounts, { limit: 1, before: made[1] });
    expect(next.accounts.map((a) => a.account_id)).toEqual([made[0]]);
    await expect(b.rpc(billingCatalog.listAccounts, { limit: 1, before: 'nope' })).rejects.toMatchObject({ code: 'account_not_found' });
  });

  it("lists an account's keys with hint, level, limits and revocation, never the key or its hash", async () => {
    const acct = await newAccount(b);
    const k1 = await b.rpc(billingCatalog.createKey, { account_id: acct, name: 'ci', tool_level: 'l1_http', rate_limit: { per_minute: 5, per_hour: 50 } });
    const k2 = await b.rpc(billingCatalog.createKey, { account_id: acct });
    await b.rpc(billingCatalog.revokeKey, { account_id: acct, key_id: k1.key_id });
    const { keys } = await b.rpc(billingCatalog.listKeys, { account_id: acct });
    expect(keys.map((k) => k.key_id)).toEqual([k2.key_id, k1.key_id]);
    expect(keys[1]).toMatchObject({ name: 'ci', tool_level: 'l1_http', rate_limit: { per_minute: 5, per_hour: 50 } });
    expect(keys[1]!.revoked_at).not.toBeNull();
    expect(keys[0]!.revoked_at).toBeNull();
    expect(k1.api_key.startsWith(keys[1]!.hint.replace(/…$/, ''))).toBe(true);
    expect(JSON.stringify(keys)).not.toContain(k1.api_key);
    expect(Object.keys(keys[0]!).sort()).toEqual(['created_at', 'expires_at', 'hint', 'key_id', 'name', 'rate_limit', 'revoked_at', 'tool_level']);
    await expect(b.rpc(billingCatalog.listKeys, { account_id: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ code: 'account_not_found' });
  });
});
