/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';
import { freePort } from '@drael/test-support';
import { RATE_LIMIT_HEADERS } from './edge-support.js';

let upstream: ScriptedUpstream;
let gateway: GatewayProcess;

const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    // Server tools off: these tests are about the plain proxy (the turn loop has its own tests).
    headers: { 'content-type': 'application/json', 'x-drael-server-tools': '0', ...gateway.authHeaders, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });

const hello = [{ role: 'user', content: 'hello' }];

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  const deadPort = await freePort();
  gateway = await startGatewayProcess({
    DRAEL_NATS_PREFIX: testPrefix('gw'),
    DRAEL_BACKEND_SERVICES: 'agent-run',
    UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
    BODY_LIMIT_BYTES: '65536',
    DRAEL_MODELS: JSON.stringify({
      'gpt-test': { base_url: upstream.baseUrl, api_key: 'sk-upstream', model: 'upstream-model' },
      'same-name': { base_url: upstream.baseUrl, model: 'same-name' },
      dead: { base_url: `http://127.0.0.1:${deadPort}/v1`, model: 'x' },
    }),
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

describe('GET /v1/models', () => {
  it('lists the configured aliases, not the upstream names', async () => {
    const r = await fetch(`${gateway.url}/v1/models`, { headers: gateway.authHeaders });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { object: string; data: Array<{ id: string; object: string }> };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id).sort()).toEqual(['dead', 'gpt-test', 'same-name']);
    expect(body.data.every((m) => m.object === 'model')).toBe(true);
  });
});

describe('POST /v1/chat/completions, proxied', () => {
  it('non-streaming: routes the alias to its upstream with the upstream name and key, and returns the answer', async () => {
    upstream.setTurns([{ type: 'text', content: 'Hi there', usage: { prompt_tokens: 7, completion_tokens: 2 } }]);
    const before = upstream.requests.length;
    const r = await post({ model: 'gpt-test', messages: hello, temperature: 0.2, some_future_param: { a: 1 } }, { 'x-request-id': 'req-nonstream-1' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-nonstream-1');
    const body = (await r.json()) as any;
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBe('Hi there');
    expect(body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });

    const seen = upstream.requests[before]!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.body.model).toBe('upstream-model');
    expect(seen.body.messages).toEqual(hello);
    expect(seen.body.temperature).toBe(0.2);
    // Unknown OpenAI fields pass through untouched.
    expect(seen.body.some_future_param).toEqual({ a: 1 });
    expect(seen.headers.authorization).toBe('Bearer sk-upstream');
    expect(seen.headers['x-request-id']).toBe('req-nonstream-1');
  });

  it('the route behind Fastify and Nest (a query string, a +json type) answers the same way', async () => {
    upstream.setTurns([{ type: 'text', content: 'via nest' }]);
    const r = await fetch(`${gateway.url}/v1/chat/completions?via=nest`, {
      method: 'POST',
      headers: { ...gateway.authHeaders, 'content-type': 'application/vnd.drael+json', 'x-drael-server-tools': '0', 'x-request-id': 'req-nest-1' },
      body: JSON.stringify({ model: 'gpt-test', messages: hello }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req-nest-1');
    expect(r.headers.get('x-ratelimit-limit')).toBeTruthy();
    expect(((await r.json()) as any).choices[0].message.content).toBe('via nest');
  });

  it('forwards the exact bytes when the alias equals the upstream name', async () => {
    upstream.setTurns([{ type: 'text', content: 'ok' }]);
    const before = upstream.requests.length;
    const raw = '{"model":"same-name",   "messages":[{"role":"user","content":"x"}]}';
    const r = await post(raw);
    expect(r.status).toBe(200);
    expect(upstream.requests[before]!.rawBody).toBe(raw);
    expect(upstream.requests[before]!.headers.authorization).toBeUndefined();
  });

  it('streaming: passes each chunk on while the upstream is still mid-answer', async () => {
    upstream.setTurns([{ type: 'text', content: ['Hel', 'lo', ' world'], pauseAfterChunks: 2 }]);
    const r = await post({ model: 'gpt-test', messages: hello, stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // The upstream has sent 2 of 5 chunks and is holding the rest: they must already be here.
    while (!text.includes('"Hel"')) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += decoder.decode(value, { stream: true });
    }
    expect(text).not.toContain('[DONE]');
    upstream.resume();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const events = parseSse(text);
    expect(events.at(-1)).toBe('[DONE]');
    const content = events
      .filter((e): e is any => typeof e === 'object')
      .map((e) => e.choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe('Hello world');
  });

  it('streaming: adds the usage chunk when stream_options.include_usage is set', async () => {
    upstream.setTurns([{ type: 'text', content: ['a', 'b'], usage: { prompt_tokens: 3, completion_tokens: 2 } }]);
    const r = await post({ model: 'gpt-test', messages: hello, stream: true, stream_options: { include_usage: true } });
    const events = parseSse(await r.text()) as any[];
    const usage = events.find((e) => typeof e === 'object' && e.usage);
    expect(usage.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(usage.choices).toEqual([]);
  });

  it('a request with tools is the client loop: tools reach the upstream as sent, tool-call chunks come back as sent', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    upstream.setTurns([{ type: 'tool_calls', calls: [{ id: 'call_1', name: 'get_weather', arguments: ['{"ci', 'ty":"Pa', 'ris"}'] }] }]);
    const before = upstream.requests.length;
    const r = await post({ model: 'gpt-test', messages: hello, tools, tool_choice: 'auto', stream: true });
    const events = parseSse(await r.text()) as any[];
    expect(upstream.requests[before]!.body.tools).toEqual(tools);
    expect(upstream.requests[before]!.body.tool_choice).toBe('auto');
    const args = events
      .filter((e) => typeof e === 'object')
      .flatMap((e) => e.choices[0]?.delta?.tool_calls ?? [])
      .map((c: any) => c.function?.arguments ?? '')
      .join('');
    expect(args).toBe('{"city":"Paris"}');
    expect(events.filter((e) => typeof e === 'object').at(-1).choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('custom tools (OpenAI’s free-form tool calls)', () => {
  // A client with `{type: "custom"}` tools sends its history back with the model's custom tool
  // calls in it; the request was a 400 naming tool_calls[0].type, so the conversation could not go on.
  const customHistory = [
    { role: 'user', content: 'run it' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'code_exec', input: 'print(1)' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '1' },
  ];
  const tools = [{ type: 'custom', custom: { name: 'code_exec', description: 'Runs Python.' } }];

  it('a history with a custom tool call is forwarded as sent, and the answer comes back', async () => {
    upstream.setTurns([{ type: 'text', content: 'it printed 1' }]);
    const before = upstream.requests.length;
    const r = await post({ model: 'gpt-test', messages: customHistory, tools });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).choices[0].message.content).toBe('it printed 1');
    expect(upstream.requests[before]!.body.messages).toEqual(customHistory);
  });

  it('a custom tool call without its name or input, or of a type OpenAI does not have, is still a 400 naming the field', async () => {
    const bad = (call: unknown) => post({ model: 'gpt-test', tools, messages: [customHistory[0], { role: 'assistant', content: null, tool_calls: [call] }] });
    const missing = await bad({ id: 'call_1', type: 'custom', custom: { name: 'code_exec' } });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param: 'messages[1].tool_calls[0].custom.input' });
    const unknown = await bad({ id: 'call_1', type: 'robot', robot: {} });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error).toMatchObject({ param: 'messages[1].tool_calls[0].type' });
  });
});

describe('errors, always in the OpenAI envelope', () => {
  const envelopeOf = async (r: Response) => (await r.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };

  it('malformed JSON is 400 invalid_json', async () => {
    const r = await post('{"model": ');
    expect(r.status).toBe(400);
    expect((await envelopeOf(r)).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('a schema violation is 400 naming the param', async () => {
    const r = await post({
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'robot', content: 'y' },
      ],
    });
    expect(r.status).toBe(400);
    const { error } = await envelopeOf(r);
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'messages[1].role', code: 'invalid_request' });
    const r2 = await post({ model: 'gpt-test' });
    expect((await envelopeOf(r2)).error.param).toBe('messages');
  });

  it('the hot route writes x-request-id and all six rate-limit headers on answers, streams and errors', async () => {
    const expectHead = (r: Response, id: string) => {
      expect(r.headers.get('x-request-id')).toBe(id);
      for (const name of RATE_LIMIT_HEADERS) {
        expect(r.headers.get(name), name).toMatch(/^\w+$/);
      }
    };
    upstream.setTurns([{ type: 'text', content: 'plain' }]);
    const plain = await post({ model: 'gpt-test', messages: hello }, { 'x-request-id': 'head-plain' });
    expect(plain.status).toBe(200);
    expectHead(plain, 'head-plain');
    await plain.text();
    upstream.setTurns([{ type: 'text', content: 'streamed' }]);
    const streamed = await post({ model: 'gpt-test', messages: hello, stream: true }, { 'x-request-id': 'head-stream' });
    expect(streamed.status).toBe(200);
    expectHead(streamed, 'head-stream');
    await streamed.text();
    const invalid = await post({ model: 'gpt-test', messages: hello, max_tokens: 0 }, { 'x-request-id': 'head-400' });
    expect(invalid.status).toBe(400);
    expectHead(invalid, 'head-400');
    expect((await envelopeOf(invalid)).error).toMatchObject({ param: 'max_tokens', code: 'invalid_request' });
    const down = await post({ model: 'dead', messages: hello }, { 'x-request-id': 'head-502' });
    expect(down.status).toBeGreaterThanOrEqual(500);
    expectHead(down, 'head-502');
    await down.text();
  });

  it('a body over BODY_LIMIT_BYTES is 413 in the envelope, whichever way the route is reached', async () => {
    const big = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] });
    // The plain path is served ahead of Fastify; a query string or a +json type goes through Nest.
    for (const [path, type] of [
      ['/v1/chat/completions', 'application/json'],
      ['/v1/chat/completions?via=nest', 'application/vnd.drael+json'],
    ] as const) {
      const r = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { ...gateway.authHeaders, 'content-type': type, 'x-drael-server-tools': '0' }, body: big });
      expect(r.status).toBe(413);
      expect(r.headers.get('x-request-id')).toBeTruthy();
      expect((await envelopeOf(r)).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    }
  });

  it('no key or a bad one is 401 before any upstream call, on the hot route too', async () => {
    const before = upstream.requests.length;
    const none = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: hello }),
    });
    expect(none.status).toBe(401);
    expect((await envelopeOf(none)).error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
    const bad = await post({ model: 'gpt-test', messages: hello }, { authorization: 'Bearer drael_wrongwrongwrongwrongwrongwrongwrongwrongwro' });
    expect(bad.status).toBe(401);
    expect((await envelopeOf(bad)).error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect(upstream.requests.length).toBe(before);
  });

  it('an unknown model is 404 model_not_found', async () => {
    const r = await post({ model: 'no-such-model', messages: hello });
    expect(r.status).toBe(404);
    expect((await envelopeOf(r)).error).toMatchObject({ type: 'not_found_error', param: 'model', code: 'model_not_found' });
  });

  it('an unknown route is a 404 envelope', async () => {
    const r = await fetch(`${gateway.url}/v1/nothing-here`);
    expect(r.status).toBe(404);
    expect((await envelopeOf(r)).error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
  });

  it('an upstream 4xx passes through with its own envelope', async () => {
    upstream.setTurns([{ type: 'error', status: 400, message: 'bad temperature', code: 'invalid_value' }]);
    const r = await post({ model: 'gpt-test', messages: hello });
    expect(r.status).toBe(400);
    expect((await envelopeOf(r)).error).toMatchObject({ message: 'bad temperature', code: 'invalid_value' });
  });

  it("an upstream 429 keeps its Retry-After and is upstream_rate_limited, not the key's rate_limit_exceeded (issue 15)", async () => {
    upstream.setTurns([{ type: 'error', status: 429, message: 'slow down', code: 'rate_limit_exceeded', headers: { 'retry-after': '7' } }]);
    const r = await post({ model: 'gpt-test', messages: hello });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    // A single-upstream alias is one deployment named after it.
    expect(r.headers.get('x-drael-upstream')).toBe('gpt-test');
    expect((await envelopeOf(r)).error).toMatchObject({ type: 'rate_limit_error', code: 'upstream_rate_limited' });
  });

  it("an upstream 5xx is answered in Drael's words, never the upstream's (its page names internal hosts)", async () => {
    upstream.setTurns([{ type: 'error', status: 503, body: '<html>nginx internal-host-10.0.0.5 overloaded</html>' }]);
    const r = await post({ model: 'gpt-test', messages: hello, stream: true });
    expect(r.status).toBe(503);
    const { error } = await envelopeOf(r);
    expect(error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    expect(error.message).toContain('503');
    expect(error.message).not.toContain('internal-host');
  });

  it("an upstream 401 (the deployment's key refused) is 502, never the caller's invalid key, and never repeats the upstream's message", async () => {
    for (const stream of [false, true]) {
      upstream.setTurns([{ type: 'error', status: 401, message: 'Incorrect API key provided: sk-UPSTREAM-SECRET', code: 'invalid_api_key' }]);
      const r = await post({ model: 'gpt-test', messages: hello, stream });
      expect(r.status).toBe(502);
      const text = await r.text();
      expect(text).not.toContain('SECRET');
      expect(JSON.parse(text).error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    }
  });

  it('a whole proxied answer is bounded like every answer the gateway keeps: past 64 MiB it is a typed 502', async () => {
    upstream.setTurns([{ type: 'flood', bytes: 80 * 1024 * 1024 }]);
    const r = await post({ model: 'gpt-test', messages: hello });
    // Without the bound the gateway would hold all of it (and wait for an end that never comes).
    expect(r.status).toBe(502);
    expect((await envelopeOf(r)).error).toMatchObject({ code: 'upstream_error', message: "The model upstream's answer went over 64 MiB; it was cut off" });
  });

  it('a proxied answer below 400 that is no answer (a redirect, an unasked content coding, an HTML page) is a typed 502, streamed or not', async () => {
    const noAnswers: Array<{ type: 'raw'; status: number; headers: Record<string, string>; body: string }> = [
      { type: 'raw', status: 307, headers: { location: 'http://127.0.0.1:9/internal' }, body: '' },
      { type: 'raw', status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '\u001f\u008b not really gzip' },
      { type: 'raw', status: 200, headers: { 'content-type': 'text/html' }, body: '<html>Bad gateway</html>' },
    ];
    for (const turn of noAnswers) {
      for (const stream of [false, true]) {
        upstream.setTurns([turn]);
        const r = await post({ model: 'gpt-test', messages: hello, stream });
        const what = `${turn.status} ${JSON.stringify(turn.headers)} stream=${stream}`;
        expect(r.status, what).toBe(502);
        expect(r.headers.get('content-encoding'), what).toBeNull();
        expect((await envelopeOf(r)).error.code, what).toBe('upstream_error');
      }
    }
  });

  it('an unreachable upstream is 502 upstream_unreachable', async () => {
    const r = await post({ model: 'dead', messages: hello });
    expect(r.status).toBe(502);
    expect((await envelopeOf(r)).error.code).toBe('upstream_unreachable');
  });

  it('an upstream that does not answer in time is 504 upstream_timeout', async () => {
    upstream.setTurns([{ type: 'text', content: 'late', headersDelayMs: 4000 }]);
    const r = await post({ model: 'gpt-test', messages: hello });
    expect(r.status).toBe(504);
    expect((await envelopeOf(r)).error).toMatchObject({ type: 'timeout_error', code: 'upstream_timeout' });
  });

  it('a connection dropped before the answer is 502', async () => {
    upstream.setTurns([{ type: 'drop' }]);
    const r = await post({ model: 'gpt-test', messages: hello, stream: true });
    expect(r.status).toBe(502);
    expect((await envelopeOf(r)).error.code).toBe('upstream_unreachable');
  });

  it('a non-streaming answer cut off half-way is 502, not a truncated body', async () => {
    upstream.setTurns([{ type: 'drop', afterChunks: 1 }]);
    const r = await post({ model: 'gpt-test', messages: hello });
    expect(r.status).toBe(502);
    expect((await envelopeOf(r)).error.type).toBe('api_error');
  });

  it('a failure after the stream started is one error event, then the stream ends', async () => {
    upstream.setTurns([{ type: 'drop', content: ['one', 'two', 'three'], afterChunks: 2 }]);
    const r = await post({ model: 'gpt-test', messages: hello, stream: true });
    expect(r.status).toBe(200);
    const events = parseSse(await r.text()) as any[];
    expect(events).toHaveLength(3);
    expect(events[1].choices[0].delta.content).toBe('one');
    expect(events[2].error).toMatchObject({ type: 'api_error' });
    expect(events).not.toContain('[DONE]');
  });
});

describe('client disconnect', () => {
  it('aborts the upstream request', async () => {
    upstream.setTurns([{ type: 'text', content: ['a', 'b', 'c'], pauseAfterChunks: 1 }]);
    const abortedBefore = upstream.aborted.length;
    const controller = new AbortController();
    const r = await post({ model: 'gpt-test', messages: hello, stream: true }, {}, controller.signal);
    const reader = r.body!.getReader();
    await reader.read();
    controller.abort();
    const deadline = Date.now() + 10_000;
    while (upstream.aborted.length === abortedBefore && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
    upstream.resume();
    expect(upstream.aborted.length).toBe(abortedBefore + 1);
  });
});

describe('request ids and logs', () => {
  it('answers with a new x-request-id when none (or a bad one) is given, and logs each request as JSON with it', async () => {
    const r = await fetch(`${gateway.url}/healthz`, { headers: { 'x-request-id': 'bad id with spaces' } });
    const id = r.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const deadline = Date.now() + 5000;
    let line: any;
    while (!line && Date.now() < deadline) {
      line = gateway
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((l) => l.request_id === id && l.msg === 'request');
      if (!line) await new Promise((res) => setTimeout(res, 50));
    }
    expect(line).toMatchObject({ level: 30, service: 'gateway', method: 'GET', url: '/healthz', status: 200 });
    expect(typeof line.ms).toBe('number');
    // The chat completions route (served ahead of Fastify) writes the same line.
    const chatLine = gateway
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === 'req-nonstream-1' && l.msg === 'request');
    expect(chatLine).toMatchObject({ level: 30, service: 'gateway', method: 'POST', url: '/v1/chat/completions', status: 200 });
    expect(Date.parse(chatLine.time)).toBeGreaterThan(0);
  });
});
