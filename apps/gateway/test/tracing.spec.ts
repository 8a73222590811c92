import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MODULE_RECORDER,
  openTelemetryModulesLoaded,
  startGatewayProcess,
  startOtlpReceiver,
  startScriptedUpstream,
  testPrefix,
  type GatewayProcess,
  type OtlpReceiver,
  type ReceivedSpan,
  type ScriptedUpstream,
} from '@drael/test-support';
import { NATS_URL, startLoopHarness, type LoopHarness } from './turn-loop.support.js';

// Issue 18, traces: a catalogue-mode chat that runs run_code is ONE trace, from the gateway's
// HTTP span through the turn, the tool call and the NATS request to the sandbox's handler and its
// container run, collected by a real OTLP/HTTP receiver (protobuf, decoded) from the real
// gateway and sandbox processes. And tracing left off loads no OpenTelemetry code at all.

const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A gateway process in front of one scripted upstream (alias gpt-test), with the test's own settings. */
function gatewayOver(upstream: ScriptedUpstream, prefix: string, env: Record<string, string>): Promise<GatewayProcess> {
  return startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: testPrefix(prefix),
      DRAEL_BACKEND_SERVICES: 'agent-run',
      SHUTDOWN_GRACE_MS: '3000',
      DRAEL_MODELS: JSON.stringify({ 'gpt-test': { model: 'upstream-model', base_url: upstream.baseUrl } }),
      ...env,
    },
    { readyTimeoutMs: 90_000 },
  );
}

/** A proxied completion (x-drael-server-tools: 0) with these headers; the traceparent the model upstream received for it, if any. */
async function proxiedCompletion(gateway: GatewayProcess, upstream: ScriptedUpstream, headers: Record<string, string>): Promise<string | undefined> {
  const before = upstream.requests.length;
  const r = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...gateway.authHeaders, 'x-drael-server-tools': '0', ...headers },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(r.status).toBe(200);
  await r.json();
  expect(upstream.requests.length).toBe(before + 1);
  const sent = upstream.requests.at(-1)!.headers.traceparent;
  return sent === undefined ? undefined : String(sent);
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let receiver: OtlpReceiver;
  let h: LoopHarness;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // A short batch delay, so spans arrive while the test waits (the default is 5 s).
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200', NODE_OPTIONS: `--import ${MODULE_RECORDER}` };
    h = await startLoopHarness({ services: ['sandbox'], env: { ...otel, LOG_LEVEL: 'info' }, serviceEnv: { sandbox: otel, search: otel, billing: otel } });
  }, 240_000);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  }, 60_000);

  /**
   * The spans of one trace once it is whole: the sandbox's container run and the gateway's HTTP
   * span are in, and every span's parent is in the trace too (or is `rootParent`, the client's
   * span; '' for a new trace). Spans come in batches from two processes, so it waits for all.
   */
  async function traceOf(traceId: () => string | undefined, rootParent: string): Promise<ReceivedSpan[]> {
    const spans = await receiver.waitFor((all) => {
      const id = traceId();
      const mine = all.filter((s) => s.traceId === id);
      const ids = new Set(mine.map((s) => s.spanId));
      return (
        mine.some((s) => s.name === 'container run') &&
        mine.some((s) => s.service === 'drael-gateway' && s.kind === 'server') &&
        mine.every((s) => s.parentSpanId === rootParent || ids.has(s.parentSpanId))
      );
    }, 60_000);
    return spans.filter((s) => s.traceId === traceId());
  }

  /** Waits until the gateway has written a line matching `where` (its log is flushed in batches). */
  async function logged(where: (line: string) => boolean): Promise<string[]> {
    for (;;) {
      const lines = h.gateway.output().split('\n').filter(where);
      if (lines.length > 0) return lines;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  function one(spans: ReceivedSpan[], where: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
    const found = spans.filter(where);
    expect(found, what).toHaveLength(1);
    return found[0]!;
  }

  it("keeps the client's trace: HTTP → turn → tool → NATS client → NATS server (sandbox) → container run, each the parent of the next", async () => {
    const clientTrace = hex(16);
    const clientSpan = hex(8);
    h.script([
      { type: 'tool_calls', calls: [call('code', 'run_code', { runtime: 'python', code: 'print(6*7)' })] },
      { type: 'text', content: 'forty-two' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: [{ role: 'user', content: 'Work it out.' }] }, { traceparent: `00-${clientTrace}-${clientSpan}-01` });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('forty-two');

    const spans = await traceOf(() => clientTrace, clientSpan);
    const http = one(spans, (s) => s.service === 'drael-gateway' && s.kind === 'server', 'the HTTP span');
    expect(http.name).toBe('POST /v1/chat/completions');
    expect(http.parentSpanId).toBe(clientSpan);
    expect(http.attributes['http.response.status_code']).toBe(200);

    const turns = spans.filter((s) => s.name === 'turn').sort((a, b) => Number(a.attributes['drael.turn']) - Number(b.attributes['drael.turn']));
    expect(turns.map((t) => t.attributes['drael.turn'])).toEqual([1, 2]);
    for (const t of turns) expect(t.parentSpanId).toBe(http.spanId);

    // Each turn's upstream call is its child, and the model upstream received that span as its parent.
    const upstreamCalls = spans.filter((s) => s.name === 'upstream gpt-test');
    expect(upstreamCalls.map((u) => u.parentSpanId).sort()).toEqual(turns.map((t) => t.spanId).sort());
    const sent = h.upstream.requests.slice(before).map((q) => q.headers.traceparent);
    expect(sent.sort()).toEqual(upstreamCalls.map((u) => `00-${clientTrace}-${u.spanId}-01`).sort());

    const tool = one(spans, (s) => s.name === 'tool run_code', 'the tool span');
    expect(tool.parentSpanId).toBe(turns[0]!.spanId);
    const client = one(spans, (s) => s.name === 'sandbox.run.v1' && s.kind === 'client', 'the NATS client span');
    expect(client.service).toBe('drael-gateway');
    expect(client.parentSpanId).toBe(tool.spanId);
    const server = one(spans, (s) => s.name === 'sandbox.run.v1' && s.kind === 'server', 'the NATS server span');
    expect(server.service).toBe('drael-sandbox');
    expect(server.parentSpanId).toBe(client.spanId);
    const run = one(spans, (s) => s.name === 'container run', 'the container run span');
    expect(run.service).toBe('drael-sandbox');
    expect(run.parentSpanId).toBe(server.spanId);
    expect(run.attributes).toMatchObject({ 'drael.sandbox.runtime': 'python', 'process.exit.code': 0 });

    // One tree (traceOf waited for every parent): the only root is the client's span.
    expect(spans.filter((s) => s.parentSpanId === clientSpan)).toEqual([http]);
    // The gateway's log lines of the request carry the trace's id (the access line at least).
    await logged((l) => l.includes(`"trace_id":"${clientTrace}"`) && l.includes('"msg":"request"'));
    // The control for the test below: tracing on loads the SDK.
    expect(openTelemetryModulesLoaded(h.gateway.output()).some((u) => u.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
  });

  it('a Responses request: its turns, upstream calls and hosted tool call are spans of the trace, each under the right parent', async () => {
    const clientTrace = hex(16);
    const clientSpan = hex(8);
    h.script([
      { type: 'tool_calls', calls: [call('d1', 'datetime', {})] },
      { type: 'text', content: 'It is now.' },
    ]);
    const r = await fetch(`${h.gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.apiKey}`, traceparent: `00-${clientTrace}-${clientSpan}-01` },
      body: JSON.stringify({ model: 'gpt-test', input: 'What time is it?', tools: [{ type: 'datetime' }], store: false }),
    });
    expect(r.status).toBe(200);
    await r.json();
    const spans = (
      await receiver.waitFor((all) => {
        const mine = all.filter((s) => s.traceId === clientTrace);
        return mine.some((s) => s.kind === 'server') && mine.filter((s) => s.name === 'turn').length === 2 && mine.some((s) => s.name === 'tool datetime');
      }, 60_000)
    ).filter((s) => s.traceId === clientTrace);
    const http = one(spans, (s) => s.service === 'drael-gateway' && s.kind === 'server', 'the HTTP span');
    expect(http.name).toBe('POST /v1/responses');
    expect(http.parentSpanId).toBe(clientSpan);
    const turns = spans.filter((s) => s.name === 'turn').sort((a, b) => Number(a.attributes['drael.turn']) - Number(b.attributes['drael.turn']));
    for (const t of turns) expect(t.parentSpanId).toBe(http.spanId);
    const tool = one(spans, (s) => s.name === 'tool datetime', 'the hosted tool span');
    expect(tool.parentSpanId).toBe(turns[0]!.spanId);
    expect(tool.attributes['drael.tool']).toBe('datetime');
    const upstreamCalls = spans.filter((s) => s.name === 'upstream gpt-test');
    expect(upstreamCalls.map((u) => u.parentSpanId).sort()).toEqual(turns.map((t) => t.spanId).sort());
  });

  it('starts a new trace when the client sends none (or a malformed one)', async () => {
    h.script([
      { type: 'tool_calls', calls: [call('code', 'run_code', { runtime: 'bash', code: 'echo hi' })] },
      { type: 'text', content: 'ok' },
    ]);
    const seen = new Set(receiver.spans.map((s) => s.traceId));
    const r = await h.chat({ messages: [{ role: 'user', content: 'Go.' }] }, { traceparent: 'not-a-traceparent' });
    expect(r.status).toBe(200);
    await r.json();
    let traceId: string | undefined;
    const spans = await traceOf(() => {
      traceId ??= receiver.spans.find((s) => !seen.has(s.traceId) && s.name === 'container run')?.traceId;
      return traceId;
    }, '');
    const http = one(spans, (s) => s.service === 'drael-gateway' && s.kind === 'server', 'the HTTP span');
    expect(http.parentSpanId).toBe('');
    expect(spans.find((s) => s.name === 'container run')!.traceId).toBe(http.traceId);
  });
});

describe('sampling (OTEL_TRACES_SAMPLER=parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG=0)', () => {
  let receiver: OtlpReceiver;
  let upstream: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'hello' }], whenExhausted: 'repeat' });
    gateway = await gatewayOver(upstream, 'sampling', {
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    await receiver?.close();
  }, 60_000);

  /** The traceparent the model upstream received for a proxied completion with these headers. */
  const complete = async (headers: Record<string, string>) => String(await proxiedCompletion(gateway, upstream, headers));

  it("ratio 0 records no new trace, yet the context is propagated; a sampled client's trace is recorded and propagated as sampled", async () => {
    // A new trace, sampled out: not recorded, but the upstream still gets a traceparent (flags 00).
    const fresh = /^00-([0-9a-f]{32})-[0-9a-f]{16}-00$/.exec(await complete({}));
    expect(fresh).not.toBeNull();
    // A client's trace it decided not to sample: followed, and passed on unsampled.
    const unsampledTrace = hex(16);
    expect(await complete({ traceparent: `00-${unsampledTrace}-${hex(8)}-00` })).toMatch(new RegExp(`^00-${unsampledTrace}-[0-9a-f]{16}-00$`));
    // A client's sampled trace: the parent decides, so it is recorded and passed on sampled.
    const sampledTrace = hex(16);
    const clientSpan = hex(8);
    const sent = await complete({ traceparent: `00-${sampledTrace}-${clientSpan}-01` });
    expect(sent).toMatch(new RegExp(`^00-${sampledTrace}-[0-9a-f]{16}-01$`));
    const spans = await receiver.waitFor((all) => all.some((s) => s.traceId === sampledTrace && s.kind === 'server'), 60_000);
    const http = spans.find((s) => s.traceId === sampledTrace && s.kind === 'server')!;
    expect(http.parentSpanId).toBe(clientSpan);
    expect(spans.find((s) => s.traceId === sampledTrace && s.name === 'upstream gpt-test')?.spanId).toBe(sent.split('-')[2]);
    // The sampled request's spans left after any of the two before would have (one batch
    // processor, spans queued as they end): every span received is of the sampled trace.
    expect([...new Set(receiver.spans.map((s) => s.traceId))]).toEqual([sampledTrace]);
  });
});

describe('tracing off (OTEL_EXPORTER_OTLP_ENDPOINT unset)', () => {
  let upstream: ScriptedUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    upstream = await startScriptedUpstream({ turns: [] });
    gateway = await gatewayOver(upstream, 'notrace', { LOG_LEVEL: 'info', NODE_OPTIONS: `--import ${MODULE_RECORDER}` });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  }, 60_000);

  it('loads no OpenTelemetry module, sends no traceparent upstream and logs no trace_id', async () => {
    upstream.setTurns([{ type: 'text', content: 'hello' }]);
    expect(await proxiedCompletion(gateway, upstream, { traceparent: `00-${hex(16)}-${hex(8)}-01` })).toBeUndefined();
    // The access line of the request (the log is flushed in batches), without a trace_id.
    while (!gateway.output().includes('"msg":"request"')) await new Promise((res) => setTimeout(res, 100));
    expect(gateway.output()).not.toContain('trace_id');
    // The recorder is preloaded here as in the test above, where it sees the SDK load (its control).
    // The API package alone may be there: prom-client's process CPU metric requires it at load
    // (for exemplars); it is the no-op API, and no SDK, exporter or context manager comes with it.
    const loaded = openTelemetryModulesLoaded(gateway.output()).filter((m) => !m.includes('/@opentelemetry/api/'));
    expect(loaded).toEqual([]);
  });
});
