import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sampleValue } from '@drael/metrics';
import {
  freePort,
  scrapeMetrics,
  startGatewayProcess,
  startOwnRedis,
  startScriptedUpstream,
  testPrefix,
  type GatewayProcess,
  type OwnServer,
  type ScriptedUpstream,
} from '@drael/test-support';
import { eventsOf, NATS_URL } from './responses.support.js';

// The attack report's F2, as the attack: /v1/responses while the Redis of its stored responses is
// killed (connection refused) or frozen (SIGSTOP: connected, answers nothing). Every call gets a
// typed 503 `service_unavailable` with Retry-After, or its answer where the answer already exists,
// and the same calls succeed again once Redis is back, without restarting the gateway. Redis is
// the test's own, on its own port; the machine's shared Redis is never touched. No call is timed:
// a call held for the outage, as before the fix, runs past the test's timeout (30 s) while Redis
// stays frozen for as long as the test waits.

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

const prefix = testPrefix('gw-resp-redis');
let redis: OwnServer;
let upstream: ScriptedUpstream;
let gateway: GatewayProcess;
let metricsUrl: string;

beforeAll(async () => {
  redis = await startOwnRedis();
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'ok' }], whenExhausted: 'repeat' });
  gateway = await startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: prefix,
      DRAEL_BACKEND_SERVICES: 'billing',
      REDIS_URL: redis.url,
      RESPONSES_KEY_PREFIX: `${prefix}:responses:`,
      RESPONSES_REDIS_TIMEOUT_MS: '300',
      RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
      RATE_LIMIT_REDIS_TIMEOUT_MS: '300',
      LOG_LEVEL: 'warn',
      METRICS_PORT: String(metricsPort),
      DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
    },
    { readyTimeoutMs: 120_000 },
  );
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await redis?.dispose();
});

// A test that timed out while Redis was frozen leaves it frozen: the next one starts with it answering.
afterEach(() => redis.thaw());

const url = (id = '') => `${gateway.url}/v1/responses${id ? `/${id}` : ''}`;
const post = (body: Record<string, unknown> = {}) =>
  fetch(url(), {
    method: 'POST',
    headers: { ...gateway.authHeaders, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', input: 'hi', ...body }),
  });
const get = (id: string) => fetch(url(id), { headers: gateway.authHeaders });
const del = (id: string) => fetch(url(id), { method: 'DELETE', headers: gateway.authHeaders });

async function expectUnavailable(pending: Promise<Response>): Promise<void> {
  const r = await pending;
  const body = await r.text();
  expect(r.status, body).toBe(503);
  expect(r.headers.get('retry-after')).toBe('2');
  expect(JSON.parse(body)).toMatchObject({ error: { code: 'service_unavailable', type: 'service_unavailable_error' } });
}

/** `stored`: what the answer says of itself (false: its save failed, so a GET will not find it). */
async function expectStored(pending: Promise<Response>, text = 'ok', stored = true): Promise<string> {
  const r = await pending;
  const body: any = await r.json();
  expect(r.status, JSON.stringify(body)).toBe(200);
  expect(body).toMatchObject({ status: 'completed', output_text: text, store: stored });
  return body.id as string;
}

async function expectStreamCompleted(pending: Promise<Response>, text = 'ok', stored = true): Promise<string> {
  const r = await pending;
  expect(r.status).toBe(200);
  const events = await eventsOf(r);
  const last = events.at(-1)!;
  expect(last).toMatchObject({ type: 'response.completed', response: { status: 'completed', store: stored } });
  expect(
    events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join(''),
  ).toBe(text);
  return last.response.id as string;
}

/** Every stored-response call while Redis is out: POST (stored; streamed too), GET, DELETE. */
async function expectEveryStoredCallUnavailable(ids: { get: string; del: string }): Promise<void> {
  await expectUnavailable(post());
  await expectUnavailable(post({ stream: true }));
  await expectUnavailable(get(ids.get));
  await expectUnavailable(del(ids.del));
  // store: false needs no store: answered as ever.
  const unstored = await post({ store: false });
  expect(unstored.status).toBe(200);
  expect(await unstored.json()).toMatchObject({ status: 'completed', output_text: 'ok' });
}

/** Redis is back: the same gateway stores, reads and deletes again (the first success may wait for its reconnect). */
async function expectServedAgain(): Promise<string> {
  let stored: Response | undefined;
  for (let i = 0; i < 50; i++) {
    stored = await post();
    if (stored.status === 200) break;
    await stored.text();
    await new Promise((r) => setTimeout(r, 200));
  }
  const id = await expectStored(Promise.resolve(stored!));
  expect(await get(id).then((r) => r.json())).toMatchObject({ id, output_text: 'ok' });
  const streamedId = await expectStreamCompleted(post({ stream: true }));
  expect((await get(streamedId)).status).toBe(200);
  expect(await del(streamedId).then((r) => r.json())).toEqual({ id: streamedId, object: 'response', deleted: true });
  expect((await get(streamedId)).status).toBe(404);
  return id;
}

describe('/v1/responses with its Redis down (F2)', () => {
  it('Redis killed: POST (stored, and streamed), GET and DELETE answer 503 service_unavailable; all are served again once it is back', async () => {
    const id = await expectStored(post());
    await redis.stop();
    try {
      await expectEveryStoredCallUnavailable({ get: id, del: id });
    } finally {
      await redis.start();
    }
    const again = await expectServedAgain();
    expect(await del(again).then((r) => r.json())).toEqual({ id: again, object: 'response', deleted: true });
  });

  it('Redis frozen: the same calls answer 503 instead of waiting for the outage; once it answers, what it held is served', async () => {
    const id = await expectStored(post());
    // A command that timed out may still run once Redis answers (the DELETE's outcome is unknown
    // to the client, as after any timeout; retrying it is safe): the GET is of another response.
    const deletedMeanwhile = await expectStored(post());
    redis.freeze();
    try {
      await expectEveryStoredCallUnavailable({ get: id, del: deletedMeanwhile });
    } finally {
      redis.thaw();
    }
    await expectServedAgain();
    // Nothing was lost by the freeze: the response stored before it is read and deleted.
    expect(await get(id).then((r) => r.json())).toMatchObject({ id, output_text: 'ok' });
    expect(await del(id).then((r) => r.json())).toEqual({ id, object: 'response', deleted: true });
  });

  describe('an answer made before Redis failed (admitted, paid for) still goes out', () => {
    /**
     * The upstream holds its answer until `fail` has made Redis fail: a whole answer before it
     * leaves, a stream after its first chunk (the client's stream has begun).
     */
    async function answerAfter(fail: () => Promise<void> | void, body: Record<string, unknown>): Promise<Response> {
      const hold = body.stream ? { pauseAfterChunks: 1 } : { pauseBeforeAnswer: true };
      upstream.setTurns([{ type: 'text', content: ['paid ', 'answer'], ...hold }]);
      const seen = upstream.requests.length;
      const pending = post(body);
      await upstream.waitForRequests(seen + 1);
      // Streamed, the head is out (the client's stream has begun) before Redis fails.
      if (body.stream) expect((await pending).status).toBe(200);
      await fail();
      upstream.resume();
      return pending;
    }

    /** Saves that failed on Redis, as the gateway's /metrics counts them. */
    const failedSaves = async () => sampleValue(await scrapeMetrics(metricsUrl), 'drael_gateway_responses_store_failures_total', { operation: 'save' });

    afterAll(() => upstream.setTurns([{ type: 'text', content: 'ok' }]));

    it('Redis frozen before the save: the answer (200), and the stream to its response.completed, each saying store: false; each save counted as failed', async () => {
      const before = await failedSaves();
      try {
        await expectStored(
          answerAfter(() => redis.freeze(), {}),
          'paid answer',
          false,
        );
      } finally {
        redis.thaw();
      }
      expect(await failedSaves()).toBe(before + 1);
      try {
        await expectStreamCompleted(
          answerAfter(() => redis.freeze(), { stream: true }),
          'paid answer',
          false,
        );
      } finally {
        redis.thaw();
      }
      expect(await failedSaves()).toBe(before + 2);
    });

    it('Redis killed before the save: the answer (200), and the stream to its response.completed, each saying store: false; each save counted as failed', async () => {
      const before = await failedSaves();
      try {
        await expectStored(
          answerAfter(() => redis.stop(), {}),
          'paid answer',
          false,
        );
      } finally {
        await redis.start();
      }
      expect(await failedSaves()).toBe(before + 1);
      upstream.setTurns([{ type: 'text', content: 'ok' }]);
      await expectServedAgain();
      try {
        await expectStreamCompleted(
          answerAfter(() => redis.stop(), { stream: true }),
          'paid answer',
          false,
        );
      } finally {
        await redis.start();
      }
      expect(await failedSaves()).toBe(before + 2);
      upstream.setTurns([{ type: 'text', content: 'ok' }]);
      await expectServedAgain();
    });
  });
});
