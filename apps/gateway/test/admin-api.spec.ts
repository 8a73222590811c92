import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIErrorEnvelopeSchema } from '@drael/contracts';
import { startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const prefix = testPrefix('gw-admin');
let upstream: ScriptedUpstream;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  // The real billing service comes with the gateway (startGatewayProcess starts it on this prefix).
  gateway = await startGatewayProcess({
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  });
  // Billing, a key and the gateway: longer than the default hook timeout on a loaded machine.
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers are probed field by field

async function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json; headers: Headers }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  if (res.status >= 400) expect(OpenAIErrorEnvelopeSchema.safeParse(json).success, JSON.stringify(json)).toBe(true);
  return { status: res.status, json, headers: res.headers };
}

const newAccount = async () => (await admin('POST', '/admin/accounts', { name: 'Admin Test' })).json.account_id as string;

describe('admin API: numbers beyond what storage holds are a 400 naming the param', () => {
  it('per_minute / per_hour of 2^31 or 1e12 on key creation', async () => {
    const acct = await newAccount();
    for (const [limits, param] of [
      [{ per_minute: 2 ** 31, per_hour: 100 }, 'rate_limit.per_minute'],
      [{ per_minute: 1e12, per_hour: 100 }, 'rate_limit.per_minute'],
      [{ per_minute: 10, per_hour: 2 ** 31 }, 'rate_limit.per_hour'],
      [{ per_minute: 10, per_hour: 1e12 }, 'rate_limit.per_hour'],
    ] as const) {
      const res = await admin('POST', `/admin/accounts/${acct}/keys`, { tool_level: 'l1_http', rate_limit: limits });
      expect(res.status, JSON.stringify(limits)).toBe(400);
      expect(res.json.error.param).toBe(param);
    }
    const created = await admin('POST', `/admin/accounts/${acct}/keys`, { rate_limit: { per_minute: 1_000_000, per_hour: 100_000_000 } });
    expect(created.status).toBe(201);
    // The one answer that shows the key: no cache may keep it (attack pass 4, F9).
    expect(created.json.api_key).toEqual(expect.any(String));
    expect(created.headers.get('cache-control')).toBe('no-store');
  });

  it("a key's per_hour is never below 60 x its per_minute: smaller is refused naming it, left out it is derived (the CLI's rule)", async () => {
    const acct = await newAccount();
    const refused = await admin('POST', `/admin/accounts/${acct}/keys`, { rate_limit: { per_minute: 2000, per_hour: 1000 } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.param).toBe('rate_limit.per_hour');
    expect(refused.json.error.message).toContain('60 x per_minute');
    const derived = await admin('POST', `/admin/accounts/${acct}/keys`, { name: 'derived', rate_limit: { per_minute: 2000 } });
    expect(derived.status).toBe(201);
    const exact = await admin('POST', `/admin/accounts/${acct}/keys`, { name: 'exact', rate_limit: { per_minute: 10, per_hour: 600 } });
    expect(exact.status).toBe(201);
    const { keys } = (await admin('GET', `/admin/accounts/${acct}/keys`)).json as { keys: { name: string; rate_limit: unknown }[] };
    expect(keys.find((k) => k.name === 'derived')?.rate_limit).toEqual({ per_minute: 2000, per_hour: 120_000 });
    expect(keys.find((k) => k.name === 'exact')?.rate_limit).toEqual({ per_minute: 10, per_hour: 600 });
  });

  it('extra_usage.daily_ceiling on account creation and on the extra-usage route', async () => {
    for (const daily_ceiling of [2 ** 31, 1e12]) {
      const res = await admin('POST', '/admin/accounts', { name: 'x', extra_usage: { enabled: true, daily_ceiling } });
      expect(res.status).toBe(400);
      expect(res.json.error.param).toBe('extra_usage.daily_ceiling');
    }
    const acct = await newAccount();
    const res = await admin('PUT', `/admin/accounts/${acct}/extra-usage`, { enabled: true, daily_ceiling: 2 ** 31 });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('daily_ceiling');
  });

  it('wallet amounts beyond their bound', async () => {
    const acct = await newAccount();
    expect((await admin('POST', `/admin/accounts/${acct}/wallet/credit`, { amount_micros: 1e13 })).json.error.param).toBe('amount_micros');
    expect((await admin('PUT', `/admin/accounts/${acct}/wallet/limits`, { agent_steps_per_minute: 2 ** 31 })).status).toBe(400);
  });
});

describe('admin API: NUL, lone surrogates and oversized names are a 4xx, never a 500', () => {
  it('account and key names, plans, ids', async () => {
    const acct = await newAccount();
    const probes: Array<[string, string, unknown, string | null]> = [
      ['POST', '/admin/accounts', { name: 'a\u0000b' }, 'name'],
      ['POST', '/admin/accounts', { name: 'lone \udc00' }, 'name'],
      ['POST', '/admin/accounts', { name: 'ok', plan: 'pro\u0000' }, 'plan'],
      ['POST', '/admin/accounts', { name: 'ok', plan: 'p'.repeat(1 << 20) }, 'plan'],
      ['POST', `/admin/accounts/${acct}/keys`, { name: 'k\u0000' }, 'name'],
    ];
    for (const [method, path, body, param] of probes) {
      const res = await admin(method, path, body);
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(res.json.error.param).toBe(param);
    }
    for (const path of [`/admin/accounts/${acct}%00/usage`, `/admin/accounts/${acct}/keys/x%00`]) {
      const res = await admin(path.endsWith('usage') ? 'GET' : 'DELETE', path);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
    }
  });
});

describe('revoking a key (attack pass 4, F6)', () => {
  it('the gateway that carried out the revoke refuses the key from its next request on, though it had the key cached', async () => {
    const acct = await newAccount();
    const created = await admin('POST', `/admin/accounts/${acct}/keys`, { rate_limit: { per_minute: 1_000_000, per_hour: 100_000_000 } });
    const models = () => fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${created.json.api_key}` } });
    // Admitted twice: the second from this gateway's key cache (AUTH_CACHE_TTL_MS, 5 s).
    expect((await models()).status).toBe(200);
    expect((await models()).status).toBe(200);
    expect((await admin('DELETE', `/admin/accounts/${acct}/keys/${created.json.key_id}`)).status).toBe(200);
    const after = await models();
    expect(after.status).toBe(401);
    expect(((await after.json()) as Json).error.code).toBe('invalid_api_key');
  });
});

describe('admin wallet credit takes an Idempotency-Key (Stripe semantics)', () => {
  it('the same key and body credit once and answer the first result; another amount is 409 idempotency_key_reused', async () => {
    const acct = await newAccount();
    const key = { 'idempotency-key': 'credit-2026-12-01' };
    const first = await admin('POST', `/admin/accounts/${acct}/wallet/credit`, { amount_micros: 2_500_000 }, key);
    expect(first.status).toBe(200);
    const again = await admin('POST', `/admin/accounts/${acct}/wallet/credit`, { amount_micros: 2_500_000 }, key);
    expect({ status: again.status, json: again.json }).toEqual({ status: first.status, json: first.json });
    const other = await admin('POST', `/admin/accounts/${acct}/wallet/credit`, { amount_micros: 1 }, key);
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ code: 'idempotency_key_reused', type: 'invalid_request_error' });
    expect((await admin('GET', `/admin/accounts/${acct}/wallet`)).json.balance_micros).toBe(2_500_000);
    // Without a key every credit counts.
    await admin('POST', `/admin/accounts/${acct}/wallet/credit`, { amount_micros: 1 });
    expect((await admin('GET', `/admin/accounts/${acct}/wallet`)).json.balance_micros).toBe(2_500_001);
  });
});
