import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleValue } from '@drael/metrics';
import { freePort, parseSse, scrapeMetrics, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

// Issue 19, item 6: the limits bench/load ran into with many concurrent streams of one key.
// - A streamed answer holds its upstream HTTP/1.1 connection for its whole length, so a cap on the
//   gateway's connections to one upstream below the streams it serves queued the rest behind whole
//   answers, unseen. By default there is no cap now (UPSTREAM_CONNECTIONS=0); a cap that is set holds.
// - A burst of requests of one key on a cold (or just expired) key cache sent one billing lookup
//   per request; under load they timed out and streams failed 504. Now one lookup per key at a time.
// The upstream holds every answer after its first chunk until the test resumes it, so "all of them
// reached the upstream at once" needs no clock.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
// Above the old default cap (128) the pool had.
const STREAMS = 200;
const prefix = testPrefix('gw-upconn');
let upstream: ScriptedUpstream;
let uncapped: GatewayProcess;
let capped: GatewayProcess;
let metricsUrl: string;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: ['hello ', 'world'], pauseAfterChunks: 1 }], whenExhausted: 'repeat' });
  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  };
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  // The key's verdict stays cached for the whole burst (the longest TTL allowed), so one lookup is exact.
  uncapped = await startGatewayProcess({ ...env, METRICS_PORT: String(metricsPort), AUTH_CACHE_TTL_MS: '60000' });
  // Same installation (NATS prefix, billing), a cap of 2; it uses uncapped's key.
  capped = await startGatewayProcess({ ...env, UPSTREAM_CONNECTIONS: '2' }, { billing: false });
}, 120_000);

afterAll(async () => {
  await capped?.stop();
  await uncapped?.stop();
  await upstream?.close();
});

/** A streamed chat; proxy mode (x-drael-server-tools: 0) or catalogue mode (the turn loop). */
const chat = (gw: GatewayProcess, mode: 'proxy' | 'catalogue') =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...uncapped.authHeaders, 'content-type': 'application/json', ...(mode === 'proxy' ? { 'x-drael-server-tools': '0' } : {}) },
    body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });

/** The answer's text, after checking the stream ended with [DONE] and carried no error event. */
async function streamedText(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  const events = parseSse(await res.text()) as ({ choices?: { delta?: { content?: string } }[]; error?: unknown } | string)[];
  expect(events.at(-1)).toBe('[DONE]');
  const objects = events.filter((e): e is Exclude<(typeof events)[number], string> => typeof e !== 'string');
  expect(objects.filter((e) => e.error !== undefined)).toEqual([]);
  return objects.map((e) => e.choices?.[0]?.delta?.content ?? '').join('');
}

describe('many concurrent streams of one key: upstream connections (UPSTREAM_CONNECTIONS) and key lookups', () => {
  it(`no cap by default: ${STREAMS} streams of a key not verified yet, proxy and catalogue mode: one key lookup, all reach the upstream before any ends, all end whole`, async () => {
    const lookups = async () => sampleValue(await scrapeMetrics(metricsUrl), 'drael_rpc_client_request_duration_seconds_count', { subject: 'billing.keys.verify.v1' });
    expect(await lookups()).toBe(0);
    const before = upstream.requests.length;
    const answers = Array.from({ length: STREAMS }, (_, i) => chat(uncapped, i % 4 === 0 ? 'catalogue' : 'proxy'));
    // What the client got meanwhile, for the message when not every request arrives.
    const settled: string[] = [];
    for (const a of answers)
      a.then(
        (r) => settled.push(String(r.status)),
        (err: Error) => settled.push(`${err.message} ${String(err.cause)}`),
      );
    // With a cap of 128 this stops at 128: the rest wait in the pool for an answer to end.
    await upstream.waitForRequests(before + STREAMS, 60_000).catch((err: Error) => {
      throw new Error(`${err.message}; answers so far: ${JSON.stringify(settled.reduce<Record<string, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {}))}`);
    });
    const mine = upstream.requests.slice(before);
    expect(new Set(mine.map((r) => r.remotePort)).size).toBe(STREAMS);
    // Every request was keyed before it reached the upstream: the burst cost billing one lookup.
    expect(await lookups()).toBe(1);
    upstream.resume();
    const texts = await Promise.all(answers.map(async (a) => streamedText(await a)));
    expect(texts).toEqual(Array.from({ length: STREAMS }, () => 'hello world'));
  }, 120_000);

  it('a cap that is set holds: 3 streams over 2 connections, the third served when one is free', async () => {
    const before = upstream.requests.length;
    const answers = [chat(capped, 'proxy'), chat(capped, 'proxy'), chat(capped, 'proxy')];
    await upstream.waitForRequests(before + 2, 30_000);
    upstream.resume();
    // The third request reaches the upstream once an answer ended and freed its connection.
    await upstream.waitForRequests(before + 3, 30_000);
    upstream.resume();
    const texts = await Promise.all(answers.map(async (a) => streamedText(await a)));
    expect(texts).toEqual(['hello world', 'hello world', 'hello world']);
    const mine = upstream.requests.slice(before);
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
  }, 90_000);
});
