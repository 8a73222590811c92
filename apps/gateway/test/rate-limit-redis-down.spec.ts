import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

// Issue 19, item 4: with Redis (the shared rate-limit counters) down, the gateway does what
// RATE_LIMIT_ON_REDIS_DOWN says, and says so (a log line, and the Prometheus counter
// drael_gateway_rate_limit_redis_down_decisions_total{policy} on each gateway's METRICS_PORT). Redis here is the test's own, on its own port: it is
// stopped and started again; the machine's shared Redis is never touched.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('gw-rl-down');
let redis: OwnServer;
let upstream: ScriptedUpstream;
let open: GatewayProcess;
let closed: GatewayProcess;
const metricsPort = { open: 0, closed: 0 };

beforeAll(async () => {
  redis = await startOwnRedis();
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'ok' }], whenExhausted: 'repeat' });
  metricsPort.open = await freePort();
  metricsPort.closed = await freePort();
  const env = (policy: 'fail_open' | 'fail_closed') => ({
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    REDIS_URL: redis.url,
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    RATE_LIMIT_ON_REDIS_DOWN: policy,
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
    METRICS_PORT: String(metricsPort[policy === 'fail_open' ? 'open' : 'closed']),
  });
  // Two requests a minute: each one is counted in Redis (a lease of one).
  open = await startGatewayProcess(env('fail_open'), { billing: { rate_limit: { per_minute: 2, per_hour: 100 } } });
  // The same installation (NATS prefix, billing, counters), the other policy; it uses open's key.
  closed = await startGatewayProcess(env('fail_closed'), { billing: false });
});

afterAll(async () => {
  await closed?.stop();
  await open?.stop();
  await upstream?.close();
  await redis?.dispose();
});

const chat = (gw: GatewayProcess) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...open.authHeaders, 'content-type': 'application/json', 'x-drael-server-tools': '0' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
  });

/** Requests each gateway decided without Redis, by its policy, as its /metrics says. */
async function redisDownDecisions(): Promise<{ open: number; closed: number }> {
  const [o, c] = await Promise.all([scrapeMetrics(`http://127.0.0.1:${metricsPort.open}`), scrapeMetrics(`http://127.0.0.1:${metricsPort.closed}`)]);
  const name = 'drael_gateway_rate_limit_redis_down_decisions_total';
  // Each gateway counts only under its own policy: the other policy's series stays at 0.
  expect(sampleValue(o, name, { policy: 'fail_closed' })).toBe(0);
  expect(sampleValue(c, name, { policy: 'fail_open' })).toBe(0);
  return { open: sampleValue(o, name, { policy: 'fail_open' }), closed: sampleValue(c, name, { policy: 'fail_closed' }) };
}

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never: ${what}`);
}

describe('rate limiting with Redis down (RATE_LIMIT_ON_REDIS_DOWN)', () => {
  it('shares the limit while Redis answers; then fail_open counts per replica (logged) and fail_closed refuses with a typed 503; both recover', async () => {
    // Shared: two requests on two replicas use the key's two; the third is refused on either.
    const first = await chat(open);
    expect(first.status, await first.clone().text()).toBe(200);
    expect((await chat(closed)).status).toBe(200);
    expect((await chat(open)).status).toBe(429);
    expect((await chat(closed)).status).toBe(429);
    // While Redis answers, no request is decided without it.
    const before = await redisDownDecisions();
    expect(before).toEqual({ open: 0, closed: 0 });

    await redis.stop();

    // fail_open: the same limit counted in this replica alone: admitted again (limit x replicas).
    const admitted = await chat(open);
    expect(admitted.status).toBe(200);
    // Logs are written asynchronously: wait for the line.
    await until('fail_open logs the outage', () => open.output().includes('rate limits are now counted per replica (RATE_LIMIT_ON_REDIS_DOWN=fail_open)'));
    expect((await chat(open)).status).toBe(200);
    expect((await chat(open)).status).toBe(429);

    // fail_closed: refused, typed and retryable, never a 500 and never past the limit.
    const refused = await chat(closed);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'service_unavailable', type: 'service_unavailable_error' } });
    await until('fail_closed logs the outage', () => closed.output().includes('RATE_LIMIT_ON_REDIS_DOWN=fail_closed'));
    // Exactly the requests sent while Redis was down: three on fail_open (two admitted, one 429
    // by the replica's own count), one refused on fail_closed.
    expect(await redisDownDecisions()).toEqual({ open: 3, closed: 1 });

    // Redis back (empty: no persistence): fail_closed serves again, shared counting resumes.
    await redis.start();
    await until('fail_closed serves again', async () => (await chat(closed)).status === 200);
    await until('fail_open logs the recovery', async () => {
      await chat(open);
      return open.output().includes('redis answers again');
    });
  });
});
