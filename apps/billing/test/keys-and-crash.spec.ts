import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, type Hold } from '@drael/contracts';
import { NATS_URL, newAccount, startBilling, unbalanced, type Billing } from './billing-harness.js';

let b: Billing;
beforeAll(async () => {
  b = await startBilling();
});
afterAll(async () => {
  await b?.close();
});

describe('API keys', () => {
  it('are shown once, stored only as a hash, carry level and limits, and stop at revocation', async () => {
    const acct = await newAccount(b, 'pro');
    const created = await b.rpc(billingCatalog.createKey, {
      account_id: acct,
      tool_level: 'l4_browser',
      rate_limit: { per_minute: 7, per_hour: 70 },
    });
    expect(created.api_key).toMatch(/^drael_[A-Za-z0-9_-]{43}$/);
    const rows = await b.sql.query(`SELECT * FROM api_keys WHERE id = $1`, [created.key_id]);
    const row = rows.rows[0] as Record<string, unknown>;
    expect(row.hash).toBe(createHash('sha256').update(created.api_key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(created.api_key.slice(6));

    const identity = await b.rpc(billingCatalog.verifyKey, { api_key: created.api_key });
    expect(identity).toEqual({ account_id: acct, key_id: created.key_id, tool_level: 'l4_browser', rate_limit: { per_minute: 7, per_hour: 70 }, plan: 'pro', expires_at: null });

    await expect(b.rpc(billingCatalog.verifyKey, { api_key: `${created.api_key.slice(0, -1)}x` })).rejects.toMatchObject({ code: 'invalid_api_key' });
    await expect(b.rpc(billingCatalog.verifyKey, { api_key: 'sk-not-ours' })).rejects.toMatchObject({ code: 'invalid_api_key' });

    expect(await b.rpc(billingCatalog.revokeKey, { account_id: acct, key_id: created.key_id })).toEqual({ key_id: created.key_id, revoked: true });
    await expect(b.rpc(billingCatalog.verifyKey, { api_key: created.api_key })).rejects.toMatchObject({ code: 'invalid_api_key' });
  });

  it('a key for an unknown account is refused; default limits apply', async () => {
    await expect(b.rpc(billingCatalog.createKey, { account_id: '00000000-0000-4000-8000-000000000001' })).rejects.toMatchObject({
      code: 'account_not_found',
    });
    const acct = await newAccount(b, 'free');
    const k = await b.rpc(billingCatalog.createKey, { account_id: acct });
    const id = await b.rpc(billingCatalog.verifyKey, { api_key: k.api_key });
    expect(id).toMatchObject({ tool_level: 'l3_shell', plan: 'free', rate_limit: { per_minute: 60, per_hour: 1000 } });
  });
});

describe('a key with an expiry', () => {
  it('works until its expiry and is then refused as an unknown key is; listed with it', async () => {
    const acct = await newAccount(b, 'free');
    const expiresAt = new Date(b.clock.t + 3_600_000);
    // Any offset is taken; billing answers in UTC.
    const local = `${new Date(expiresAt.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const created = await b.rpc(billingCatalog.createKey, { account_id: acct, expires_at: local });
    expect(created.expires_at).toBe(new Date(Math.floor(expiresAt.getTime() / 1000) * 1000).toISOString());
    expect(await b.rpc(billingCatalog.verifyKey, { api_key: created.api_key })).toMatchObject({ key_id: created.key_id, expires_at: created.expires_at });
    expect((await b.rpc(billingCatalog.listKeys, { account_id: acct })).keys[0]).toMatchObject({ key_id: created.key_id, expires_at: created.expires_at, revoked_at: null });

    b.clock.set(created.expires_at!);
    await expect(b.rpc(billingCatalog.verifyKey, { api_key: created.api_key })).rejects.toMatchObject({ code: 'invalid_api_key', message: 'Incorrect API key provided.' });
  });

  it('an expiry that is not in the future, or not an RFC 3339 time with an offset, is bad_request naming expires_at', async () => {
    const acct = await newAccount(b, 'free');
    for (const expires_at of [
      new Date(b.clock.t).toISOString(),
      new Date(b.clock.t - 1).toISOString(),
      '2027-01-01',
      '2027-01-01T00:00:00',
      'tomorrow',
      '2027-02-30T00:00:00Z',
      `2027-01-01T00:00:00.${'9'.repeat(80)}Z`,
    ]) {
      await expect(b.rpc(billingCatalog.createKey, { account_id: acct, expires_at }), expires_at).rejects.toMatchObject({ code: 'bad_request', details: { param: 'expires_at' } });
    }
    expect((await b.rpc(billingCatalog.listKeys, { account_id: acct })).keys).toEqual([]);
  });
});

describe('a caller killed after its hold', () => {
  it('leaves a hold the sweeper releases after its ttl', async () => {
    const acct = await newAccount(b);
    const child = spawn(process.execPath, [resolve(import.meta.dirname, 'fixtures/hold-then-hang.mjs'), acct, 'crash-1'], {
      cwd: resolve(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH ?? '', NATS_URL, DRAEL_NATS_PREFIX: b.prefix },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const hold = await new Promise<Hold>((res, rej) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) res(JSON.parse(out) as Hold);
      });
      child.once('exit', (code) => rej(new Error(`caller exited (${code}) before holding`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect((await b.usage.get(acct)).allowances.images.held).toBe(4);

    // Before its expiry the sweeper leaves it alone; after, it returns the units. (What a pass
    // expires in all is not this test's to count: the schema is shared with every file of the
    // run, and holds other tests left behind may be past their expiry by then.)
    await b.sweeper.sweep(new Date(Date.parse(hold.expires_at) - 1_000));
    expect((await b.usage.get(acct)).allowances.images.held).toBe(4);
    expect((await b.sql.query(`SELECT status FROM holds WHERE id = $1`, [hold.hold_id])).rows[0]).toEqual({ status: 'held' });
    await b.sweeper.sweep(new Date(Date.parse(hold.expires_at) + 1_000));
    expect((await b.usage.get(acct)).allowances.images).toMatchObject({ held: 0, used: 0 });
    const row = await b.sql.query(`SELECT status FROM holds WHERE id = $1`, [hold.hold_id]);
    expect(row.rows[0]).toEqual({ status: 'expired' });
    // The caller's late settle finds the hold resolved.
    await expect(b.rpc(billingCatalog.settle, { account_id: acct, hold_id: hold.hold_id, units: 4 })).rejects.toMatchObject({
      code: 'hold_already_resolved',
    });
    expect(await unbalanced(b.sql)).toEqual([]);
  });
});
