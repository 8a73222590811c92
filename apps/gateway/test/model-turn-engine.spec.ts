/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_TURN_INSTRUCTION, MAX_TURNS } from '../src/engine/model-turn.engine.js';
import { startLoopHarness, toolMessages, type LoopHarness } from './turn-loop.support.js';

// issue 16: chat completions' catalogue mode and the Responses API run on one model-turn engine.
// Each rule the engine holds is checked here through both loops, against the same scripted
// upstream: the turn limit and the final-turn instruction, the answer to a made-up tool, and the
// error of an answer that breaks off mid-stream.
let h: LoopHarness;
const ask = [{ role: 'user', content: 'What is new?' }];

beforeAll(async () => {
  // An answer must show a piece of itself every second (the keep-alive test); every other answer here comes at once.
  // Two tool calls a request (the limit test); the other tests here call only made-up tools, which do not count.
  h = await startLoopHarness({ env: { UPSTREAM_BODY_TIMEOUT_MS: '1000', DRAEL_REQUEST_TOOL_CALLS: '2' } });
}, 180_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

function responses(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${h.gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.apiKey}` },
    body: JSON.stringify({ model: 'gpt-test', store: false, ...body }),
  });
}

/** The upstream requests one client request caused. */
async function seenFor(send: () => Promise<Response>): Promise<{ text: string; seen: Array<{ body: any }> }> {
  const before = h.upstream.requests.length;
  const text = await (await send()).text();
  return { text, seen: h.upstream.requests.slice(before) };
}

/** One request through each loop and each way of answering: chat not streamed, chat streamed, Responses. */
const everyWay = [() => h.chat({ messages: ask }), () => h.chat({ messages: ask, stream: true }), () => responses({ input: 'What is new?' })];

const forever = { type: 'tool_calls' as const, calls: [{ id: 'm1', name: 'made_up_tool', arguments: '{}' }] };

describe('one model-turn engine for chat and Responses', () => {
  it('both loops stop at the same turn limit; the last turn runs without server tools and carries the same instruction', async () => {
    h.script(Array.from({ length: MAX_TURNS + 1 }, () => forever));
    const chat = await seenFor(() => h.chat({ messages: ask }));
    h.script(Array.from({ length: MAX_TURNS + 1 }, () => forever));
    const resp = await seenFor(() => responses({ input: 'What is new?', tools: [{ type: 'web_search' }] }));

    expect(chat.seen).toHaveLength(MAX_TURNS);
    expect(resp.seen).toHaveLength(MAX_TURNS);
    for (const { seen } of [chat, resp]) {
      expect(seen.slice(0, -1).every((r) => Array.isArray(r.body.tools) && r.body.tools.length > 0)).toBe(true);
      expect(seen.at(-1)!.body.tools).toBeUndefined();
      expect(seen.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: FINAL_TURN_INSTRUCTION });
      // The instruction joins only the last turn.
      expect(seen.at(-2)!.body.messages.some((m: any) => m.content === FINAL_TURN_INSTRUCTION)).toBe(false);
    }
  });

  it('a made-up tool gets the same answer in both loops', async () => {
    const script = [forever, { type: 'text' as const, content: 'ok' }];
    h.script(script);
    const chat = await seenFor(() => h.chat({ messages: ask }));
    h.script(script);
    const resp = await seenFor(() => responses({ input: 'What is new?' }));
    const fromChat = toolMessages(chat.seen[1]!.body)[0]!;
    const fromResponses = toolMessages(resp.seen[1]!.body)[0]!;
    expect(fromChat.content).toMatchObject({ ok: false, error: 'unknown_tool' });
    expect(fromResponses).toEqual(fromChat);
    // issue 20, both loops: a client that does not stream gets no upstream stream.
    expect([...chat.seen, ...resp.seen].map((r) => r.body.stream)).toEqual([false, false, false, false]);
  });

  it('an answer that breaks off mid-stream is the same typed error from both loops', async () => {
    const drop = { type: 'drop' as const, content: ['partial ', 'answer'], afterChunks: 1 };
    h.script([drop]);
    const chat = await h.chat({ messages: ask });
    h.script([drop]);
    const resp = await responses({ input: 'What is new?' });
    const chatError = ((await chat.json()) as any).error;
    const respError = ((await resp.json()) as any).error;
    expect(chat.status).toBeGreaterThanOrEqual(500);
    expect(resp.status).toBe(chat.status);
    expect(chatError.code).toMatch(/^upstream_/);
    expect({ code: respError.code, message: respError.message }).toEqual({ code: chatError.code, message: chatError.message });
  });

  it('an answer that never ends (one endless line, held open) is cut at 64 MiB: the same typed error from both loops, streamed or not', async () => {
    const flood = { type: 'flood' as const, bytes: 80 * 1024 * 1024 };
    const answers: Array<{ status: number; error: any }> = [];
    for (const send of everyWay) {
      h.script([flood]);
      const res = await send();
      answers.push({ status: res.status, error: ((await res.json()) as any).error });
    }
    // Without the bound, none of these would answer: the upstream never ends its answer.
    for (const a of answers) {
      expect(a.status).toBe(502);
      expect(a.error).toMatchObject({ code: 'upstream_error', message: "The model upstream's answer went over 64 MiB; it was cut off" });
    }
  });

  it('an upstream that sends only keep-alives is a typed 504 from both loops, streamed or not, once its body timeout passes without an answer', async () => {
    const idle = { type: 'keepalive' as const, everyMs: 100 };
    const sends = [() => h.chat({ messages: ask }), () => h.chat({ messages: ask, stream: true }), () => responses({ input: 'What is new?' })];
    for (const send of sends) {
      h.script([idle]);
      const res = await send();
      // Without the bound, none of these would answer: every keep-alive resets undici's body timeout.
      expect(res.status).toBe(504);
      expect(((await res.json()) as any).error.code).toBe('upstream_timeout');
    }
  });

  it('a broken upstream is a typed 502 from both loops, streamed or not: an HTML page, headers over the limit; never a 500', async () => {
    const html = { type: 'raw' as const, status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad gateway</body></html>' };
    const bigHeader = { type: 'raw' as const, status: 200, headers: { 'content-type': 'application/json', 'x-padding': 'a'.repeat(60_000) }, body: '{}' };
    for (const turn of [html, bigHeader]) {
      for (const send of everyWay) {
        h.script([turn]);
        const res = await send();
        const what = `${turn === html ? 'html' : 'big header'}`;
        expect(res.status, what).toBe(502);
        expect(((await res.json()) as any).error.code, what).toBe('upstream_error');
      }
    }
  });

  it('a streamed turn answered as one JSON object (a server that ignores stream: true) is read as that answer', async () => {
    const completion = {
      id: 'c1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Plain answer.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 2 },
    };
    h.script([{ type: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) }]);
    const res = await h.chat({ messages: ask, stream: true });
    expect(res.status).toBe(200);
    const text = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Plain answer.');
  });

  it('a streamed tool call at index 2^31 - 1 is one call, run at once (an index is a key, not an array length)', async () => {
    const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const body = [
      chunk({ tool_calls: [{ index: 2 ** 31 - 1, id: 'far', type: 'function', function: { name: 'made_up_tool', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ].join('');
    h.script([
      { type: 'raw', status: 200, headers: { 'content-type': 'text/event-stream' }, body },
      { type: 'text', content: 'done' },
    ]);
    const seen = await seenFor(() => h.chat({ messages: ask, stream: true }));
    expect(seen.text).toContain('done');
    expect(toolMessages(seen.seen[1]!.body)).toHaveLength(1);
    expect(toolMessages(seen.seen[1]!.body)[0]).toMatchObject({ tool_call_id: 'far', content: { ok: false, error: 'unknown_tool' } });
  });

  it('a turn asking for more than 128 tool calls is refused whole, typed, from both loops: none of them runs', async () => {
    const calls = Array.from({ length: 129 }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: 'made_up_tool', arguments: '{}' } }));
    const json = {
      type: 'raw' as const,
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] }),
    };
    const events = calls.map((c, i) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: i, ...c }] }, finish_reason: null }] })}\n\n`).join('');
    const sse = { type: 'raw' as const, status: 200, headers: { 'content-type': 'text/event-stream' }, body: `${events}data: [DONE]\n\n` };
    for (const [turn, send] of [
      [json, () => h.chat({ messages: ask })],
      [sse, () => h.chat({ messages: ask, stream: true })],
      [json, () => responses({ input: 'What is new?' })],
    ] as const) {
      h.script([turn, { type: 'text', content: 'never asked' }]);
      const { text, seen } = await seenFor(send);
      expect(JSON.parse(text).error).toMatchObject({ code: 'upstream_error', message: 'The model asked for more than 128 tool calls in one turn; none of them was run' });
      // No tool ran, so no second turn was asked for.
      expect(seen).toHaveLength(1);
    }
  });

  it('events and answers of any shape are typed errors and never take the gateway down: null, arrays, tool calls that are not a list', async () => {
    const sse = (...events: string[]) => ({
      type: 'raw' as const,
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: `${events.map((e) => `data: ${e}\n\n`).join('')}data: [DONE]\n\n`,
    });
    const json = (body: string) => ({ type: 'raw' as const, status: 200, headers: { 'content-type': 'application/json' }, body });
    const streamed = [sse('null'), sse('[1,2]'), sse('{"choices":[{"index":0,"delta":{"tool_calls":[null]}}]}'), sse('{"choices":[{"index":0,"delta":{"tool_calls":5}}]}')];
    for (const turn of streamed) {
      h.script([turn]);
      const res = await h.chat({ messages: ask, stream: true });
      expect(res.status, turn.body).toBe(502);
      expect(((await res.json()) as any).error.code, turn.body).toBe('upstream_error');
    }
    for (const turn of [json('null'), json('[]'), json('{"choices":[{"index":0,"message":{"tool_calls":7}}]}')]) {
      h.script([turn]);
      const res = await h.chat({ messages: ask });
      expect(res.status, turn.body).toBe(502);
    }
    // A null among the calls is no call; the answer is the text.
    h.script([json('{"choices":[{"index":0,"message":{"content":"fine","tool_calls":[null]},"finish_reason":"stop"}]}')]);
    expect(((await (await h.chat({ messages: ask })).json()) as any).choices[0].message.content).toBe('fine');
    // Still serving.
    h.script([{ type: 'text', content: 'alive' }]);
    expect(((await (await h.chat({ messages: ask })).json()) as any).choices[0].message.content).toBe('alive');
  });

  it('catalogue mode asks the upstream for what the client asked: streamed and not, the same answer, usage and tool handling', async () => {
    const script = [
      {
        type: 'tool_calls' as const,
        content: 'Let me check. ',
        calls: [{ id: 't1', name: 'made_up_tool', arguments: ['{"q":', '"x"}'] }],
        usage: { prompt_tokens: 11, completion_tokens: 4 },
      },
      { type: 'text' as const, content: ['The ', 'answer.'], usage: { prompt_tokens: 20, completion_tokens: 2 } },
    ];
    h.script(script);
    const plain = await seenFor(() => h.chat({ messages: ask }));
    h.script(script);
    const before = h.upstream.requests.length;
    const streamed = await h.chat({ messages: ask, stream: true, stream_options: { include_usage: true } });
    const events = (await streamed.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
      .map((e) => JSON.parse(e.slice(6)));
    const streamedSeen = h.upstream.requests.slice(before) as Array<{ body: any }>;

    // The upstream streamed only for the streaming client.
    expect(plain.seen.map((r) => r.body.stream)).toEqual([false, false]);
    expect(streamedSeen.map((r) => r.body.stream)).toEqual([true, true]);
    // The same tool handling: the second turn carries the same assistant call and tool result.
    const strip = (body: any) => ({ ...body, stream: undefined, stream_options: undefined });
    expect(strip(plain.seen[1]!.body)).toEqual(strip(streamedSeen[1]!.body));
    expect(toolMessages(plain.seen[1]!.body)[0]).toMatchObject({ tool_call_id: 't1', content: { ok: false, error: 'unknown_tool' } });
    // The same answer and usage.
    const completion = JSON.parse(plain.text);
    expect(completion.choices[0].message.content).toBe(events.map((e) => e.choices[0]?.delta?.content ?? '').join(''));
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toEqual(events.at(-1).usage);
    expect(completion.usage).toEqual({ prompt_tokens: 31, completion_tokens: 6, total_tokens: 37 });
  });

  it('a response runs at most DRAEL_REQUEST_TOOL_CALLS hosted tool calls; later ones are answered tool_call_limit_reached, not run', async () => {
    const clock = (id: string) => ({ id, name: 'datetime', arguments: '{}' });
    h.script([
      { type: 'tool_calls', calls: [clock('d1'), clock('d2'), clock('d3')] },
      { type: 'text', content: 'done' },
    ]);
    const before = h.upstream.requests.length;
    const res = await responses({ input: 'What time is it?', tools: [{ type: 'datetime' }] });
    expect(res.status).toBe(200);
    const seen = h.upstream.requests.slice(before);
    const results = toolMessages(seen[1]!.body);
    expect(results.map((r) => r.tool_call_id)).toEqual(['d1', 'd2', 'd3']);
    expect(results[2]!.content).toMatchObject({ ok: false, error: 'tool_call_limit_reached' });
    expect(JSON.stringify(results[0]!.content)).not.toContain('tool_call_limit_reached');
  });
});

// Attack report, pass 2 (F1, F3, F4): proxy mode (the client's own tools, or server tools off)
// relays the upstream's bytes unparsed, and held none of the bounds above: an upstream trickling
// keep-alives held a whole answer's client for ever (not even a head) and a stream's for ever; a
// stream that stopped short ended cleanly, as if whole; a non-answer passed as a 200.
describe('proxy mode holds the same bounds', () => {
  const proxied = (body: Record<string, unknown>) => h.chat({ messages: ask, ...body }, { 'x-drael-server-tools': '0' });
  const events = (text: string) =>
    text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));

  it('an upstream that sends only keep-alives: a whole answer gets a typed 504; a stream an error event, then its end', async () => {
    const idle = { type: 'keepalive' as const, everyMs: 100 };
    h.script([idle]);
    const whole = await proxied({});
    expect(whole.status).toBe(504);
    expect(((await whole.json()) as any).error.code).toBe('upstream_timeout');

    h.script([idle]);
    const streamed = await proxied({ stream: true });
    expect(streamed.status).toBe(200);
    const last = events(await streamed.text()).at(-1)!;
    expect(JSON.parse(last).error).toMatchObject({ code: 'upstream_timeout' });
  });

  it('a stream that ends with neither a finish reason nor [DONE] ends with an error event; a whole one ends as it came', async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    h.script([{ type: 'raw', status: 200, headers: { 'content-type': 'text/event-stream' }, body: chunk({ role: 'assistant', content: 'The answer is' }) }]);
    const cut = events(await (await proxied({ stream: true })).text());
    expect(JSON.parse(cut[0]!).choices[0].delta.content).toBe('The answer is');
    expect(JSON.parse(cut.at(-1)!).error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('ended before it finished') });

    // Cut inside an event: the error is still an event of its own, which the client can read.
    h.script([
      {
        type: 'raw',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: `${chunk({ role: 'assistant', content: 'The' })}data: {"choices":[{"index":0,"delta":{"content":" ans`,
      },
    ]);
    const midLine = events(await (await proxied({ stream: true })).text());
    expect(JSON.parse(midLine.at(-1)!).error).toMatchObject({ code: 'upstream_error' });

    // Ended by its finish reason alone (a few servers send no [DONE]), or by [DONE]: no error.
    for (const body of [chunk({ content: 'Whole.' }) + chunk({}, 'stop'), `${chunk({ content: 'Whole.' }) + chunk({}, 'stop')}data: [DONE]\n\n`]) {
      h.script([{ type: 'raw', status: 200, headers: { 'content-type': 'text/event-stream' }, body }]);
      const whole = events(await (await proxied({ stream: true })).text());
      expect(whole.join('\n')).not.toContain('"error"');
    }
  });

  it('a stream to a request for a whole answer is a typed 502; a JSON answer to a stream request is that stream if it is a completion, else a typed 502', async () => {
    h.script([
      {
        type: 'raw',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: 'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
      },
    ]);
    const sse = await proxied({});
    expect(sse.status).toBe(502);
    expect(((await sse.json()) as any).error.code).toBe('upstream_error');

    for (const stream of [true, false]) {
      h.script([{ type: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body: '{"detail":"model is loading"}' }]);
      const detail = await proxied({ stream });
      expect(detail.status).toBe(502);
      expect(((await detail.json()) as any).error.code).toBe('upstream_error');
    }

    const completion = {
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'up',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    };
    h.script([{ type: 'raw', status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) }]);
    const converted = await proxied({ stream: true, stream_options: { include_usage: true } });
    expect(converted.status).toBe(200);
    expect(converted.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks = events(await converted.text());
    expect(chunks.at(-1)).toBe('[DONE]');
    const parsed = chunks.slice(0, -1).map((c) => JSON.parse(c));
    expect(parsed.every((c) => c.object === 'chat.completion.chunk' && c.id === 'c1')).toBe(true);
    expect(parsed[0].choices[0].delta.tool_calls[0]).toMatchObject({ index: 0, id: 't1', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });
    expect(parsed[1].choices[0].finish_reason).toBe('tool_calls');
    expect(parsed.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } });
  });
});
