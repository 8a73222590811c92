/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { createTestKey, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const prefix = testPrefix('gw-auth');
let upstream: ScriptedUpstream;
let gateway: GatewayProcess;
let nats: NatsRpcClient;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  gateway = await startGatewayProcess({
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    AUTH_CACHE_TTL_MS: '1000',
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    // Leases of a tenth of a key's limit: the 3-to-10-request keys below still count one by one.
    RATE_LIMIT_LEASE_FRACTION: '0.1',
    DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  });
  nats = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
});

afterAll(async () => {
  await nats?.close();
  await gateway?.stop();
  await upstream?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gateway.url}${path}`, { headers });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const chat = (key: string, stream: boolean) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', 'x-drael-server-tools': '0' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream }),
  });

describe('API keys on every /v1 and /api route', () => {
  it('no key: 401 missing_api_key in the OpenAI envelope; a bad key: 401 invalid_api_key', async () => {
    for (const path of ['/v1/models', '/api/billing/usage']) {
      const none = await get(path);
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ error: { type: 'authentication_error', code: 'missing_api_key', param: null } });
      const bad = await get(path, bearer('drael_wrongwrongwrongwrongwrongwrongwrongwrongwro'));
      expect(bad.status).toBe(401);
      expect(await bad.json()).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
    }
    const noKeyChat = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(noKeyChat.status).toBe(401);
  });

  it('health, readiness and the published plans need no key', async () => {
    expect((await get('/healthz')).status).toBe(200);
    expect([200, 503]).toContain((await get('/readyz')).status);
    expect((await get('/api/billing/plans')).status).toBe(200);
  });

  it("a good key passes, and its identity reaches the handlers (usage is the key's account)", async () => {
    const r = await get('/v1/models', gateway.authHeaders);
    expect(r.status).toBe(200);
    const usage = await get('/api/billing/usage', gateway.authHeaders);
    expect(usage.status).toBe(200);
    expect(await usage.json()).toMatchObject({ account_id: gateway.key!.account_id, plan: 'pro' });
  });

  it('a revoked key stops working within seconds', async () => {
    const k = await createTestKey(nats, {});
    expect((await get('/v1/models', bearer(k.api_key))).status).toBe(200);
    await nats.request(billingCatalog.revokeKey, { account_id: k.account_id, key_id: k.key_id });
    // The gateway trusts a verified key for AUTH_CACHE_TTL_MS (1 s here); poll well past it.
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      await new Promise((res) => setTimeout(res, 200));
      status = (await get('/v1/models', bearer(k.api_key))).status;
    }
    expect(status).toBe(401);
  });

  it("cross-account: a key never reads another account's usage", async () => {
    const other = await createTestKey(nats, {});
    const r = await get(`/api/billing/usage?account_id=${other.account_id}`, gateway.authHeaders);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: { code: 'not_found' } });
    const own = await get(`/api/billing/usage?account_id=${gateway.key!.account_id}`, gateway.authHeaders);
    expect(own.status).toBe(200);
    // The admin API is not opened by an API key.
    const adm = await fetch(`${gateway.url}/admin/accounts/${other.account_id}/usage`, { headers: gateway.authHeaders });
    expect(adm.status).toBe(401);
  });
});

describe('rate limits per key (Redis)', () => {
  it('headers on a plain response, then 429 rate_limit_exceeded with Retry-After past the limit', async () => {
    const k = await createTestKey(nats, { rate_limit: { per_minute: 3, per_hour: 100 } });
    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < 3; i++) {
      upstream.setTurns([{ type: 'text', content: 'ok' }]);
      const r = await chat(k.api_key, false);
      await r.text();
      expect(r.headers.get('x-ratelimit-limit')).toBe('3');
      expect(r.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+s$/);
      seen.push({ status: r.status, remaining: r.headers.get('x-ratelimit-remaining') });
      expect(r.headers.get('x-ratelimit-remaining-requests')).toBe(r.headers.get('x-ratelimit-remaining'));
    }
    expect(seen).toEqual([
      { status: 200, remaining: '2' },
      { status: 200, remaining: '1' },
      { status: 200, remaining: '0' },
    ]);
    const refused = await chat(k.api_key, false);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await refused.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    // Another key of the same gateway is not affected.
    expect((await get('/v1/models', gateway.authHeaders)).status).toBe(200);
  });

  it('headers are on a streamed response, before its first byte', async () => {
    const k = await createTestKey(nats, { rate_limit: { per_minute: 10, per_hour: 100 } });
    upstream.setTurns([{ type: 'text', content: 'streamed answer' }]);
    const r = await chat(k.api_key, true);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    // fetch resolves on the head: the headers were written before any of the body.
    expect(r.headers.get('x-ratelimit-limit')).toBe('10');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('9');
    expect(await r.text()).toContain('[DONE]');
  });

  it('is shared by every gateway replica (the counters live in Redis)', async () => {
    const replica = await startGatewayProcess(
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        DRAEL_BACKEND_SERVICES: 'billing',
        RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
        DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
      },
      { billing: false }, // the first gateway's billing answers on this prefix already
    );
    try {
      const k = await createTestKey(nats, { rate_limit: { per_minute: 3, per_hour: 100 } });
      const on = (gw: GatewayProcess) => fetch(`${gw.url}/v1/models`, { headers: bearer(k.api_key) });
      expect((await on(gateway)).headers.get('x-ratelimit-remaining')).toBe('2');
      expect((await on(replica)).headers.get('x-ratelimit-remaining')).toBe('1');
      expect((await on(gateway)).headers.get('x-ratelimit-remaining')).toBe('0');
      const refused = await on(replica);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBeTruthy();
    } finally {
      await replica.stop();
    }
  });

  it('takes budget from Redis in leases, and the replicas together admit exactly the limit', async () => {
    const replica = await startGatewayProcess(
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        DRAEL_BACKEND_SERVICES: 'billing',
        RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
        RATE_LIMIT_LEASE_FRACTION: '0.1',
        DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
      },
      { billing: false },
    );
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const k = await createTestKey(nats, { rate_limit: { per_minute: 40, per_hour: 1_000 } });
      const minuteCount = async () => Number(await redis.get(`${prefix}:rl:minute:${k.key_id}`));
      const on = (gw: GatewayProcess) => fetch(`${gw.url}/v1/models`, { headers: bearer(k.api_key) });
      // A lease is a tenth of 40: the first request takes 4 from Redis, the next 3 take none.
      const first = await on(gateway);
      expect(first.headers.get('x-ratelimit-remaining')).toBe('39');
      expect(await minuteCount()).toBe(4);
      expect(Number(await redis.get(`${prefix}:rl:hour:${k.key_id}`))).toBe(4);
      for (const left of ['38', '37', '36']) expect((await on(gateway)).headers.get('x-ratelimit-remaining')).toBe(left);
      expect(await minuteCount()).toBe(4);
      expect((await on(gateway)).headers.get('x-ratelimit-remaining')).toBe('35');
      expect(await minuteCount()).toBe(8);

      // Both replicas until both refuse: every leased request is used, none beyond the limit.
      let admitted = 5;
      const refusedBy = new Set<GatewayProcess>();
      for (let i = 0; refusedBy.size < 2 && i < 100; i++) {
        const gw = i % 2 === 0 ? replica : gateway;
        const r = await on(gw);
        if (r.status === 200) {
          admitted++;
        } else {
          expect(r.status).toBe(429);
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
          refusedBy.add(gw);
        }
      }
      expect(admitted).toBe(40);
      expect(await minuteCount()).toBe(40);

      // Concurrent first requests of a key wait for one take instead of each leasing.
      const k2 = await createTestKey(nats, { rate_limit: { per_minute: 400, per_hour: 10_000 } });
      const burst = await Promise.all(Array.from({ length: 8 }, () => fetch(`${gateway.url}/v1/models`, { headers: bearer(k2.api_key) })));
      expect(burst.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(burst.map((r) => r.headers.get('x-ratelimit-remaining')).sort()).toEqual(['392', '393', '394', '395', '396', '397', '398', '399']);
      expect(Number(await redis.get(`${prefix}:rl:minute:${k2.key_id}`))).toBe(40);

      // The hot chat completions route admits from the lease without a round trip, counting the same way.
      const k3 = await createTestKey(nats, { rate_limit: { per_minute: 40, per_hour: 1_000 } });
      const hotLeft: (string | null)[] = [];
      for (let i = 0; i < 5; i++) {
        upstream.setTurns([{ type: 'text', content: 'ok' }]);
        const r = await chat(k3.api_key, false);
        await r.text();
        expect(r.status).toBe(200);
        hotLeft.push(r.headers.get('x-ratelimit-remaining'));
        if (i === 3) expect(Number(await redis.get(`${prefix}:rl:minute:${k3.key_id}`))).toBe(4);
      }
      expect(hotLeft).toEqual(['39', '38', '37', '36', '35']);
      expect(Number(await redis.get(`${prefix}:rl:minute:${k3.key_id}`))).toBe(8);
    } finally {
      redis.disconnect();
      await replica.stop();
    }
  });

  it('the hour window counts too', async () => {
    const k = await createTestKey(nats, { rate_limit: { per_minute: 100, per_hour: 2 } });
    expect((await get('/v1/models', bearer(k.api_key))).headers.get('x-ratelimit-limit')).toBe('2');
    expect((await get('/v1/models', bearer(k.api_key))).status).toBe(200);
    const r = await get('/v1/models', bearer(k.api_key));
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(60);
  });
});

describe('GET /api/billing/plans', () => {
  it('publishes the plans with an ETag and answers 304 to a matching If-None-Match', async () => {
    const r = await get('/api/billing/plans');
    expect(r.status).toBe(200);
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const body = (await r.json()) as any;
    expect(body.data.map((p: any) => p.id)).toContain('free');
    expect(body.data[0]).toHaveProperty('weekly.images');
    const again = await get('/api/billing/plans', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect((await get('/api/billing/plans', { 'if-none-match': '"other"' })).status).toBe(200);
  });
});

describe('admin API (admin token)', () => {
  it('creates an account and a key that works, and revokes it', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expect((await fetch(`${gateway.url}/admin/accounts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' })).status).toBe(401);
    expect(
      (await fetch(`${gateway.url}/admin/accounts`, { method: 'POST', headers: { ...admin, authorization: 'Bearer wrong-token-wrong-token-wrong' }, body: '{"name":"x"}' })).status,
    ).toBe(401);
    const acct = await fetch(`${gateway.url}/admin/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Acme', plan: 'team' }) });
    expect(acct.status).toBe(201);
    const { account_id } = (await acct.json()) as { account_id: string };
    const keyRes = await fetch(`${gateway.url}/admin/accounts/${account_id}/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ tool_level: 'l1_http' }) });
    expect(keyRes.status).toBe(201);
    const key = (await keyRes.json()) as { api_key: string; key_id: string; tool_level: string };
    expect(key).toMatchObject({ tool_level: 'l1_http' });
    expect((await get('/api/billing/usage', bearer(key.api_key))).status).toBe(200);
    const bad = await fetch(`${gateway.url}/admin/accounts/${account_id}/keys`, { method: 'POST', headers: admin, body: JSON.stringify({ tool_level: 'root' }) });
    expect(bad.status).toBe(400);
    const adminNoBody = { authorization: admin.authorization };
    const del = await fetch(`${gateway.url}/admin/accounts/${account_id}/keys/${key.key_id}`, { method: 'DELETE', headers: adminNoBody });
    expect(await del.json()).toEqual({ key_id: key.key_id, revoked: true });
    const wrongAcct = await fetch(`${gateway.url}/admin/accounts/${gateway.key!.account_id}/keys/${key.key_id}`, { method: 'DELETE', headers: adminNoBody });
    expect(wrongAcct.status).toBe(404);
  });

  it('tops up the wallet and sets the agent limits agent steps are billed against', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const acct = await fetch(`${gateway.url}/admin/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Wallet Co' }) });
    const { account_id } = (await acct.json()) as { account_id: string };
    // Not opened by an API key.
    expect((await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet`, { headers: gateway.authHeaders })).status).toBe(401);
    const fresh = await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet`, { headers: admin });
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toMatchObject({ account_id, balance_micros: 0, monthly_budget_micros: null });
    const credit = await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount_micros: 2_500_000 }) });
    expect(credit.status).toBe(200);
    expect(await credit.json()).toMatchObject({ balance_micros: 2_500_000, available_micros: 2_500_000 });
    const limits = await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet/limits`, {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({ monthly_budget_micros: 1_000_000, agent_steps_per_minute: 30 }),
    });
    expect(await limits.json()).toMatchObject({ balance_micros: 2_500_000, monthly_budget_micros: 1_000_000, agent_steps_per_minute: 30 });
    // Bad input is a 400 naming the param, and changes nothing.
    const negative = await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet/credit`, { method: 'POST', headers: admin, body: JSON.stringify({ amount_micros: -5 }) });
    expect(negative.status).toBe(400);
    expect(((await negative.json()) as { error: { param: string } }).error.param).toContain('amount_micros');
    const after = (await (await fetch(`${gateway.url}/admin/accounts/${account_id}/wallet`, { headers: admin })).json()) as { balance_micros: number };
    expect(after.balance_micros).toBe(2_500_000);
  });
});
