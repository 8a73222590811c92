import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { billingCatalog, gatewayCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { createTestKey, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

// Two gateway replicas on one prefix and one billing, as a deployment runs them. Their key caches
// keep a verdict for a minute here (the most AUTH_CACHE_TTL_MS allows), so only the revocation's announcement can make a replica
// refuse a key it has cached: nothing in these tests waits for an entry to expire.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('gw-revoke');
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
let upstream: ScriptedUpstream;
let gatewayA: GatewayProcess;
let gatewayB: GatewayProcess;
let rpc: NatsRpcClient;
let nc: NatsConnection;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    AUTH_CACHE_TTL_MS: '60000',
    DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  };
  gatewayA = await startGatewayProcess(env);
  // The second replica uses the first one's billing.
  gatewayB = await startGatewayProcess(env, { billing: false });
  rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  nc = await connect({ servers: NATS_URL });
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await rpc?.close();
  await gatewayB?.stop();
  await gatewayA?.stop();
  await upstream?.close();
});

const models = (gateway: GatewayProcess, apiKey: string) => fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } });

describe('a revoked key is refused by every gateway replica from its next request on', () => {
  it('revoked through billing (its CLI sends this): both replicas had the key cached, both refuse it at once', async () => {
    const key = await createTestKey(rpc);
    for (const gateway of [gatewayA, gatewayB]) {
      // Twice on each: the second is answered from that replica's key cache.
      expect((await models(gateway, key.api_key)).status).toBe(200);
      expect((await models(gateway, key.api_key)).status).toBe(200);
    }
    expect(await rpc.request(billingCatalog.revokeKey, { account_id: key.account_id, key_id: key.key_id })).toEqual({ key_id: key.key_id, revoked: true });
    for (const gateway of [gatewayA, gatewayB]) {
      const after = await models(gateway, key.api_key);
      expect(after.status, gateway.url).toBe(401);
      expect(((await after.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    }
  });

  it('the revocation drops that key only: another key both replicas cached stays cached', async () => {
    const kept = await createTestKey(rpc);
    const revoked = await createTestKey(rpc);
    for (const gateway of [gatewayA, gatewayB]) expect((await models(gateway, kept.api_key)).status).toBe(200);
    await rpc.request(billingCatalog.revokeKey, { account_id: revoked.account_id, key_id: revoked.key_id });
    for (const gateway of [gatewayA, gatewayB]) expect((await models(gateway, kept.api_key)).status).toBe(200);
    // Whichever replica answers first had the kept key still cached.
    expect(await rpc.request(gatewayCatalog.forgetKey, { key_id: kept.key_id })).toEqual({ key_id: kept.key_id, dropped: true });
  });
});

describe("a key's expiry", () => {
  it('a key cached by both replicas is refused from its expiry on, though the cache would keep it a minute', async () => {
    const key = await createTestKey(rpc);
    const expiresAt = new Date(Date.now() + 3_000).toISOString();
    const expiring = await rpc.request(billingCatalog.createKey, { account_id: key.account_id, expires_at: expiresAt });
    for (const gateway of [gatewayA, gatewayB]) {
      expect((await models(gateway, expiring.api_key)).status).toBe(200);
      expect((await models(gateway, expiring.api_key)).status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, Date.parse(expiring.expires_at!) - Date.now() + 50));
    for (const gateway of [gatewayA, gatewayB]) {
      const after = await models(gateway, expiring.api_key);
      expect(after.status, gateway.url).toBe(401);
      expect(((await after.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    }
  });

  it('the admin API takes expires_at, answers it, and refuses a time in the past with a 400 naming it', async () => {
    const { account_id } = await createTestKey(rpc);
    const create = (body: unknown) =>
      fetch(`${gatewayA.url}/admin/accounts/${account_id}/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const past = await create({ expires_at: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { param: string } }).error.param).toBe('expires_at');
    const notATime = await create({ expires_at: 'next week' });
    expect(notATime.status).toBe(400);
    expect(((await notATime.json()) as { error: { param: string } }).error.param).toBe('expires_at');
    const created = await create({ expires_at: '2099-06-30T12:00:00-05:00' });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { expires_at: string }).expires_at).toBe('2099-06-30T17:00:00.000Z');
  });
});

describe('gateway.keys.forget.v1 on the wire (every replica hears it)', () => {
  const subject = `${prefix}.${gatewayCatalog.forgetKey.subject}`;

  it('a plain JSON request from any NATS client is answered; a key nobody cached is not dropped', async () => {
    const reply = await nc.request(subject, JSON.stringify({ key_id: 'never-seen' }), { timeout: 2_000 });
    expect(reply.json()).toEqual({ result: { key_id: 'never-seen', dropped: false } });
  });

  it('a body its schema refuses is bad_request naming the field, and the listener goes on', async () => {
    const notJson = await nc.request(subject, 'not json', { timeout: 2_000 });
    expect(notJson.json<{ error: { code: string } }>().error.code).toBe('bad_request');
    const bad = await nc.request(subject, JSON.stringify({ key_id: 'x', extra: 1 }), { timeout: 2_000 });
    expect(bad.json<{ error: { code: string } }>().error.code).toBe('bad_request');
    const tooLong = await nc.request(subject, JSON.stringify({ key_id: 'k'.repeat(65) }), { timeout: 2_000 });
    expect(tooLong.json<{ error: { code: string; details: { param: string } } }>().error.details.param).toBe('key_id');
    const after = await nc.request(subject, JSON.stringify({ key_id: 'still-listening' }), { timeout: 2_000 });
    expect(after.json()).toEqual({ result: { key_id: 'still-listening', dropped: false } });
  });

  it('a message without a reply subject is not acted on: the key stays cached', async () => {
    const key = await createTestKey(rpc);
    for (const gateway of [gatewayA, gatewayB]) expect((await models(gateway, key.api_key)).status).toBe(200);
    nc.publish(subject, JSON.stringify({ key_id: key.key_id }));
    // A request after it on the same connection reaches each replica after the publish did;
    // whichever answers first still had the key.
    const reply = await nc.request(subject, JSON.stringify({ key_id: key.key_id }), { timeout: 2_000 });
    expect(reply.json()).toEqual({ result: { key_id: key.key_id, dropped: true } });
  });
});
