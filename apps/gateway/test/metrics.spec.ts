import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, fetchCatalog } from '@drael/contracts';
import { sampleValue } from '@drael/metrics';
import { freePort, scrapeMetrics, startPrometheus, startServiceProcess, type ServiceProcess } from '@drael/test-support';
import { NATS_URL, startLoopHarness, type LoopHarness } from './turn-loop.support.js';

// Issue 18: after real requests through a real stack (gateway, billing, sandbox, fetch on one NATS
// prefix; only the model upstream is a scripted double), each process's /metrics moved by exactly
// what the requests did; then a real Prometheus scrapes every process and finds every target up.

let h: LoopHarness;
let fetchService: ServiceProcess;
const ports = { gateway: 0, billing: 0, sandbox: 0, fetch: 0 };
const urlOf = (p: number) => `http://127.0.0.1:${p}`;
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

/** Scrapes a process before and after `act`, and reads how far one series moved. */
async function delta(port: number, act: () => Promise<void>) {
  const before = await scrapeMetrics(urlOf(port));
  await act();
  const after = await scrapeMetrics(urlOf(port));
  return (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
}

beforeAll(async () => {
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  h = await startLoopHarness({
    services: ['sandbox'],
    env: { METRICS_PORT: String(ports.gateway), RESPONSES_KEY_PREFIX: `test:metrics-${process.pid}:responses:` },
    serviceEnv: { sandbox: { HEALTH_PORT: String(ports.sandbox) }, billing: { HEALTH_PORT: String(ports.billing) } },
  });
  fetchService = await startServiceProcess(
    'fetch',
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: h.prefix,
      FETCH_CACHE_PREFIX: `${h.prefix}:`,
      TOR_SOCKS_URL: '',
      // The browser is not what these tests count (its contexts are a gauge read at scrape time).
      FETCH_BROWSER: 'off',
      HEALTH_PORT: String(ports.fetch),
    },
    { readyTimeoutMs: 120_000 },
  );
}, 300_000);

afterAll(async () => {
  await fetchService?.stop();
  await h?.close();
}, 60_000);

describe('GET /metrics after real requests', () => {
  it('a proxied stream counts as open while it streams, and not once it ended or its client left', async () => {
    const openProxy = async () => sampleValue(await scrapeMetrics(urlOf(ports.gateway)), 'drael_gateway_open_streams', { mode: 'proxy' });
    const before = await openProxy();
    const proxied = { 'x-drael-server-tools': '0' };
    const body = { messages: [{ role: 'user', content: 'hi' }], stream: true };

    h.script([{ type: 'text', content: 'one two three', pauseAfterChunks: 1 }]);
    const ends = await h.chat(body, proxied);
    const reader = ends.body!.getReader();
    await reader.read(); // the head and the first chunk are out: the stream is open
    expect(await openProxy()).toBe(before + 1);
    h.upstream.resume();
    while (!(await reader.read()).done);
    expect(await openProxy()).toBe(before);

    h.script([{ type: 'text', content: 'one two three', pauseAfterChunks: 1 }]);
    const leaves = new AbortController();
    const left = await h.chat(body, proxied, leaves.signal);
    await left.body!.getReader().read();
    expect(await openProxy()).toBe(before + 1);
    leaves.abort();
    await expect.poll(openProxy).toBe(before);
    h.upstream.resume();
  });

  it('a chat with a tool call: the request, its mode, both upstream turns, tokens and cost, the tool call, the RPC on both sides', async () => {
    h.script([
      { type: 'tool_calls', calls: [call('c1', 'run_code', { runtime: 'python', code: 'print(6*7)' })], usage: { prompt_tokens: 100, completion_tokens: 20 } },
      { type: 'text', content: '42', usage: { prompt_tokens: 150, completion_tokens: 3 } },
    ]);
    let sandboxDelta!: (name: string, labels?: Record<string, string>) => number;
    const startsBefore = sampleValue(await scrapeMetrics(urlOf(ports.sandbox)), 'drael_sandbox_container_start_seconds_count', { runtime: 'python' });
    const gw = await delta(ports.gateway, async () => {
      sandboxDelta = await delta(ports.sandbox, async () => {
        const r = await h.chat({ messages: [{ role: 'user', content: 'compute' }] });
        expect(r.status).toBe(200);
        await r.json();
      });
    });
    expect(gw('drael_gateway_http_request_duration_seconds_count', { route: '/v1/chat/completions', method: 'POST', status_class: '2xx', mode: 'catalogue' })).toBe(1);
    expect(gw('drael_gateway_turns_per_request_count', { mode: 'catalogue' })).toBe(1);
    expect(gw('drael_gateway_turns_per_request_sum', { mode: 'catalogue' })).toBe(2);
    expect(gw('drael_gateway_upstream_attempts_total', { alias: 'gpt-test' })).toBe(2);
    expect(gw('drael_gateway_upstream_first_byte_seconds_count', { alias: 'gpt-test' })).toBe(2);
    expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'in' })).toBe(250);
    expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'out' })).toBe(23);
    // DRAEL_MODELS prices: input 1 USD and output 2 USD per million tokens.
    expect(gw('drael_gateway_cost_usd_total', { alias: 'gpt-test' })).toBeCloseTo((250 * 1 + 23 * 2) / 1e6, 12);
    expect(gw('drael_gateway_tool_call_duration_seconds_count', { tool: 'run_code', outcome: 'ok' })).toBe(1);
    expect(gw('drael_rpc_client_request_duration_seconds_count', { subject: 'sandbox.run.v1', outcome: 'ok' })).toBe(1);
    expect(sandboxDelta('drael_rpc_handler_duration_seconds_count', { subject: 'sandbox.run.v1', outcome: 'ok' })).toBe(1);
    expect(sandboxDelta('drael_sandbox_run_duration_seconds_count', { runtime: 'python', outcome: 'ok' })).toBe(1);
    // Containers are started ahead of their run (issue 20): the run took one started before it,
    // and the workspace's next one is started after the reply, so the count moves once that is done.
    await expect
      .poll(async () => sampleValue(await scrapeMetrics(urlOf(ports.sandbox)), 'drael_sandbox_container_start_seconds_count', { runtime: 'python' }) - startsBefore, {
        timeout: 30_000,
      })
      .toBeGreaterThanOrEqual(1);
  });

  it('a Responses request: its turns under mode responses, its hosted tool call, its tokens', async () => {
    h.script([
      { type: 'tool_calls', calls: [call('d1', 'datetime', {})], usage: { prompt_tokens: 40, completion_tokens: 6 } },
      { type: 'text', content: 'It is now.', usage: { prompt_tokens: 60, completion_tokens: 4 } },
    ]);
    const gw = await delta(ports.gateway, async () => {
      const r = await fetch(`${h.gateway.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${h.apiKey}` },
        body: JSON.stringify({ model: 'gpt-test', input: 'What time is it?', tools: [{ type: 'datetime' }], store: false }),
      });
      expect(r.status).toBe(200);
      expect(((await r.json()) as { status: string }).status).toBe('completed');
    });
    expect(gw('drael_gateway_http_request_duration_seconds_count', { route: '/v1/responses', method: 'POST', status_class: '2xx', mode: 'responses' })).toBe(1);
    expect(gw('drael_gateway_turns_per_request_count', { mode: 'responses' })).toBe(1);
    expect(gw('drael_gateway_turns_per_request_sum', { mode: 'responses' })).toBe(2);
    expect(gw('drael_gateway_turns_per_request_count', { mode: 'catalogue' })).toBe(0);
    expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'in' })).toBe(100);
    expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'out' })).toBe(10);
  });

  describe("proxy mode (the client brings its own tools or asks for none): tokens read from the answer's last bytes", () => {
    const proxied = (body: Record<string, unknown>) => h.chat({ messages: [{ role: 'user', content: 'hi' }], ...body }, { 'x-drael-server-tools': '0' });

    it('a non-streamed answer: its usage counted by alias, with its cost', async () => {
      h.script([{ type: 'text', content: 'hello', usage: { prompt_tokens: 17, completion_tokens: 29 } }]);
      const gw = await delta(ports.gateway, async () => {
        const r = await proxied({});
        expect(r.status).toBe(200);
        expect(((await r.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(17);
      });
      expect(gw('drael_gateway_http_request_duration_seconds_count', { route: '/v1/chat/completions', method: 'POST', status_class: '2xx', mode: 'proxy' })).toBe(1);
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'in' })).toBe(17);
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'out' })).toBe(29);
      expect(gw('drael_gateway_cost_usd_total', { alias: 'gpt-test' })).toBeCloseTo((17 * 1 + 29 * 2) / 1e6, 12);
    });

    it('a stream whose client asked for its usage event (stream_options.include_usage): counted from its last chunks', async () => {
      h.script([{ type: 'text', content: ['one ', 'two ', 'three'], usage: { prompt_tokens: 23, completion_tokens: 31 } }]);
      const gw = await delta(ports.gateway, async () => {
        const r = await proxied({ stream: true, stream_options: { include_usage: true } });
        expect(r.status).toBe(200);
        expect(await r.text()).toContain('"prompt_tokens":23');
      });
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'in' })).toBe(23);
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'out' })).toBe(31);
    });

    it('a stream without a usage event: nothing is counted (the upstream reported none)', async () => {
      h.script([{ type: 'text', content: ['one ', 'two'], usage: { prompt_tokens: 23, completion_tokens: 31 } }]);
      const gw = await delta(ports.gateway, async () => {
        const r = await proxied({ stream: true });
        expect(r.status).toBe(200);
        expect(await r.text()).not.toContain('prompt_tokens');
      });
      expect(gw('drael_gateway_http_request_duration_seconds_count', { route: '/v1/chat/completions', method: 'POST', status_class: '2xx', mode: 'proxy' })).toBe(1);
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'in' })).toBe(0);
      expect(gw('drael_gateway_tokens_total', { alias: 'gpt-test', direction: 'out' })).toBe(0);
    });
  });

  it('a sandbox timeout: the run counts as timeout, the tool call as failed', async () => {
    h.script([
      { type: 'tool_calls', calls: [call('t1', 'run_code', { runtime: 'python', code: 'import time\ntime.sleep(30)', timeout_s: 1 })] },
      { type: 'text', content: 'too slow' },
    ]);
    let sandboxDelta!: (name: string, labels?: Record<string, string>) => number;
    const gw = await delta(ports.gateway, async () => {
      sandboxDelta = await delta(ports.sandbox, async () => {
        const r = await h.chat({ messages: [{ role: 'user', content: 'sleep' }] });
        expect(r.status).toBe(200);
        await r.json();
      });
    });
    expect(sandboxDelta('drael_sandbox_run_duration_seconds_count', { runtime: 'python', outcome: 'timeout' })).toBe(1);
    expect(sandboxDelta('drael_sandbox_run_duration_seconds_count', { runtime: 'python', outcome: 'ok' })).toBe(0);
    expect(gw('drael_gateway_tool_call_duration_seconds_count', { tool: 'run_code', outcome: 'failed' })).toBe(1);
  });

  it('a refused hold: counted by its reason, its latency as refused, the handler outcome as the code', async () => {
    const free = await h.newKey({ plan: 'free' });
    const billing = await delta(ports.billing, async () => {
      await expect(
        h.nats.request(billingCatalog.hold, { account_id: free.account_id, tool: 'breach_lookup', units: 1, idempotency_key: `metrics-${h.prefix}` }),
      ).rejects.toMatchObject({ code: 'plan_required' });
    });
    expect(billing('drael_billing_refusals_total', { reason: 'plan_required' })).toBe(1);
    expect(billing('drael_billing_hold_duration_seconds_count', { result: 'refused' })).toBe(1);
    expect(billing('drael_billing_holds_total', { event: 'opened' })).toBe(0);
    expect(billing('drael_rpc_handler_duration_seconds_count', { subject: 'billing.holds.create.v1', outcome: 'plan_required' })).toBe(1);
  });

  it('an SSRF refusal: counted by its reason, the URL nowhere in the exposition', async () => {
    let text = '';
    const fetchDelta = await delta(ports.fetch, async () => {
      await expect(h.nats.request(fetchCatalog.page, { url: 'http://127.0.0.1:9/secret-path?token=abc' })).rejects.toMatchObject({ code: 'blocked_address' });
      text = await scrapeMetrics(urlOf(ports.fetch));
    });
    expect(fetchDelta('drael_fetch_ssrf_refusals_total', { reason: 'loopback' })).toBe(1);
    expect(fetchDelta('drael_rpc_handler_duration_seconds_count', { subject: 'fetch.page.v1', outcome: 'blocked_address' })).toBe(1);
    expect(text).not.toContain('secret-path');
    expect(text).not.toContain('127.0.0.1');
  });

  it('every process reports its dependencies and Node process metrics', async () => {
    const billing = await scrapeMetrics(urlOf(ports.billing));
    expect(sampleValue(billing, 'drael_dependency_up', { dependency: 'postgres' })).toBe(1);
    expect(sampleValue(billing, 'drael_dependency_up', { dependency: 'nats' })).toBe(1);
    expect(sampleValue(await scrapeMetrics(urlOf(ports.sandbox)), 'drael_dependency_up', { dependency: 'docker' })).toBe(1);
    const gw = await scrapeMetrics(urlOf(ports.gateway));
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total']) expect(gw).toContain(`# TYPE ${name} `);
    expect(gw).toContain('# TYPE nodejs_gc_duration_seconds histogram');
  });
});

describe('a real Prometheus scraping the stack', () => {
  it('finds every target up', async () => {
    const prom = await startPrometheus(Object.fromEntries(Object.entries(ports).map(([job, port]) => [job, [`127.0.0.1:${port}`]])));
    try {
      let targets: Awaited<ReturnType<typeof prom.targets>> = [];
      for (let i = 0; i < 120; i++) {
        targets = await prom.targets();
        if (targets.length === 4 && targets.every((t) => t.health === 'up')) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      expect(targets.map((t) => ({ job: t.job, health: t.health, lastError: t.lastError })).sort((a, b) => a.job.localeCompare(b.job))).toEqual(
        ['billing', 'fetch', 'gateway', 'sandbox'].map((job) => ({ job, health: 'up', lastError: '' })),
      );
      const up = await prom.query('up');
      expect(up.map((s) => s.value[1])).toEqual(['1', '1', '1', '1']);
      // The series the requests above moved are in Prometheus under the same names.
      expect((await prom.query('sum(drael_gateway_http_request_duration_seconds_count{mode="catalogue"})'))[0]?.value[1]).toBe('2');
    } finally {
      await prom.stop();
    }
  }, 120_000);
});
