import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { NatsRpcClient } from '@drael/nats-rpc';
import { sampleValue } from '@drael/metrics';
import { createTestKey, freePort, scrapeMetrics, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';
import { NATS_URL, REDIS_URL } from './responses.support.js';

/*
 * F6 (multi-replica fault pass): stored responses had a bound per account and none overall, so many
 * accounts, each under its own bound, could fill the Redis that rate limits and agent-run's queue
 * share. RESPONSES_TOTAL_MAX_BYTES bounds them together, over every gateway replica: here two
 * gateway processes on one Redis, each account storing through both, refused past the
 * installation's bound with the account bound's own error (429 quota_exceeded), room given back by
 * a delete on the other replica.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

const prefix = testPrefix('gw-resp-total');
const keyPrefix = `test:${prefix}:responses:`;
// Every response here is one question of 3 KiB and the answer "ok": about 7 KiB stored (the
// question is kept twice, as a message and as an input item). Each account may keep 64 KiB; the
// installation 24 KiB: three such responses, whoever stores them.
const question = 'q'.repeat(3 * 1024);
let upstream: ScriptedUpstream;
let a: GatewayProcess;
let b: GatewayProcess;
let redis: Redis;
let metricsUrl: string;
const keys: Record<string, string>[] = [];

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'ok' }], whenExhausted: 'repeat' });
  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    REDIS_URL,
    RESPONSES_KEY_PREFIX: keyPrefix,
    RESPONSES_ACCOUNT_MAX_BYTES: String(64 * 1024),
    RESPONSES_TOTAL_MAX_BYTES: String(24 * 1024),
    RATE_LIMIT_KEY_PREFIX: `test:${prefix}:rl:`,
    LOG_LEVEL: 'warn',
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  };
  // The second replica shares the first one's billing (same NATS prefix), as replicas do.
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  a = await startGatewayProcess({ ...env, METRICS_PORT: String(metricsPort) }, { readyTimeoutMs: 120_000 });
  b = await startGatewayProcess(env, { readyTimeoutMs: 120_000, billing: false });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  try {
    for (let i = 0; i < 4; i++) keys.push({ authorization: `Bearer ${(await createTestKey(client)).api_key}` });
  } finally {
    await client.close();
  }
  redis = new Redis(REDIS_URL);
}, 240_000);

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await upstream?.close();
  const left = (await redis?.keys(`test:${prefix}:*`)) ?? [];
  if (left.length) await redis.del(...left);
  redis?.disconnect();
});

const post = (gateway: GatewayProcess, auth: Record<string, string>) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', input: question }),
  });

async function stored(gateway: GatewayProcess, auth: Record<string, string>): Promise<string> {
  const r = await post(gateway, auth);
  const body: any = await r.json();
  expect(r.status, JSON.stringify(body)).toBe(200);
  expect(body).toMatchObject({ status: 'completed', store: true });
  return body.id as string;
}

describe('stored responses over the whole installation, two gateway replicas', () => {
  it('refuse a new store past RESPONSES_TOTAL_MAX_BYTES on either replica (429 quota_exceeded), each account far under its own bound; a delete on one replica frees room on the other', async () => {
    const [k1, k2, k3, k4] = keys as [Record<string, string>, Record<string, string>, Record<string, string>, Record<string, string>];
    const first = await stored(a, k1);
    await stored(b, k2);
    await stored(a, k3);
    const asked = upstream.requests.length;

    for (const gateway of [a, b]) {
      const r = await post(gateway, k4);
      const body: any = await r.json();
      expect(r.status, JSON.stringify(body)).toBe(429);
      expect(body.error).toMatchObject({ code: 'quota_exceeded', type: 'insufficient_quota', param: 'store' });
      expect(body.error.message).toContain('installation');
    }
    // Refused before the model was called (nothing paid for that could not be kept), as the account bound is.
    expect(upstream.requests.length).toBe(asked);
    // Counted for the operator (alert DraelResponsesStoreFull): one refusal on replica a.
    expect(sampleValue(await scrapeMetrics(metricsUrl), 'drael_gateway_responses_store_refusals_total', { scope: 'installation' })).toBe(1);

    // store: false needs no room.
    const unstored = await fetch(`${b.url}/v1/responses`, {
      method: 'POST',
      headers: { ...k4, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', input: question, store: false }),
    });
    expect(unstored.status).toBe(200);

    expect((await fetch(`${b.url}/v1/responses/${first}`, { method: 'DELETE', headers: k1 })).status).toBe(200);
    const fourth = await stored(a, k4);
    expect((await fetch(`${b.url}/v1/responses/${fourth}`, { headers: k4 })).status).toBe(200);
  }, 120_000);
});
