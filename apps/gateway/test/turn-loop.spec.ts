/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_TURN_INSTRUCTION } from '../src/engine/model-turn.engine.js';
import { readStream, startLoopHarness, toolMessages, toolNames, type LoopHarness } from './turn-loop.support.js';
import { RATE_LIMIT_HEADERS } from './edge-support.js';

// The loop's mechanics against a scripted upstream on a real socket. No backend service answers
// on this prefix, so only spawn_agent is wired: the other tools must not be served at all.
let h: LoopHarness;
const ask = [{ role: 'user', content: 'What is new?' }];

beforeAll(async () => {
  h = await startLoopHarness();
}, 180_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

describe('catalogue mode', () => {
  it('serves only wired tools: with no service answering, the upstream sees spawn_agent alone', async () => {
    h.script([{ type: 'text', content: 'Hello' }]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    expect(r.status).toBe(200);
    const seen = h.upstream.requests[before]!;
    expect(toolNames(seen.body)).toEqual(['spawn_agent']);
    expect(seen.body.model).toBe('upstream-model');
    // issue 20: a client that does not stream gets no upstream stream either.
    expect(seen.body.stream).toBe(false);
  });

  it('streams one ordinary answer: text before a tool call passes through, one id, role once, one finish_reason, [DONE] once, usage summed', async () => {
    h.script([
      {
        type: 'tool_calls',
        content: ['Let me ', 'check. '],
        calls: [{ id: 'c1', name: 'web_search', arguments: ['{"query":', '"drael"}'] }],
        usage: { prompt_tokens: 11, completion_tokens: 3 },
      },
      { type: 'text', content: ['It is ', 'new.'], usage: { prompt_tokens: 20, completion_tokens: 4 } },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask, stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/event-stream/);
    const s = await readStream(r);
    expect(s.content).toBe('Let me check. \n\nIt is new.');
    expect(s.ids.size).toBe(1);
    expect(s.roles).toBe(1);
    expect(s.finishReasons).toEqual(['stop']);
    expect(s.done).toBe(1);
    expect(s.events.at(-1)).toBe('[DONE]');
    const usage = s.chunks.find((c) => c.usage)?.usage;
    expect(usage).toEqual({ prompt_tokens: 31, completion_tokens: 7, total_tokens: 38 });
    // No tool traffic in the client's stream.
    expect(JSON.stringify(s.chunks)).not.toContain('tool_calls');

    // The second turn carries the call and its result (web_search is not served here: it says so).
    const second = h.upstream.requests[before + 1]!;
    const assistant = second.body.messages.at(-2);
    expect(assistant).toMatchObject({ role: 'assistant', content: 'Let me check. ', tool_calls: [{ id: 'c1', function: { name: 'web_search', arguments: '{"query":"drael"}' } }] });
    const [result] = toolMessages(second.body);
    expect(result).toMatchObject({ tool_call_id: 'c1', content: { ok: false, error: 'unknown_tool' } });
  });

  it('without include_usage no usage chunk is sent', async () => {
    h.script([{ type: 'text', content: 'ok' }]);
    const s = await readStream(await h.chat({ messages: ask, stream: true }));
    expect(s.chunks.some((c) => c.usage)).toBe(false);
    expect(s.finishReasons).toEqual(['stop']);
  });

  it('non-streamed: one ordinary completion with the final text and usage summed over turns', async () => {
    h.script([
      { type: 'tool_calls', calls: [{ name: 'nope', arguments: '{}' }], usage: { prompt_tokens: 5, completion_tokens: 1 } },
      { type: 'text', content: 'Done.', usage: { prompt_tokens: 9, completion_tokens: 2 } },
    ]);
    const r = await h.chat({ messages: ask });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('gpt-test');
    expect(body.choices).toHaveLength(1);
    expect(body.choices[0].message).toMatchObject({ role: 'assistant', content: 'Done.' });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage).toEqual({ prompt_tokens: 14, completion_tokens: 3, total_tokens: 17 });
  });

  it('every answer carries x-request-id, the six rate-limit headers and the serving deployment: streamed, not streamed, and an upstream error', async () => {
    const expectHead = (r: Response) => {
      expect(r.headers.get('x-request-id')).toBeTruthy();
      for (const name of RATE_LIMIT_HEADERS) {
        expect(r.headers.get(name), name).not.toBeNull();
      }
    };
    h.script([{ type: 'text', content: 'ok' }]);
    const streamed = await h.chat({ messages: ask, stream: true });
    expectHead(streamed);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(streamed.headers.get('x-drael-upstream')).toBeTruthy();
    await readStream(streamed);

    h.script([{ type: 'text', content: 'ok' }]);
    const whole = await h.chat({ messages: ask });
    expectHead(whole);
    expect(whole.headers.get('x-drael-upstream')).toBeTruthy();
    expect(Number(whole.headers.get('content-length'))).toBe(Buffer.byteLength(await whole.text()));

    h.script([{ type: 'error', status: 400, message: 'bad' }]);
    const failed = await h.chat({ messages: ask });
    expect(failed.status).toBe(400);
    expectHead(failed);
    await failed.text();
  });

  it('a model that calls tools forever gets six turns; the sixth has no catalogue and is told to answer', async () => {
    const forever = { type: 'tool_calls' as const, content: 'again ', calls: [{ name: 'web_search', arguments: '{"query":"x"}' }] };
    // Seven tool-call turns scripted: only the gateway's ceiling can stop at six.
    h.script([forever, forever, forever, forever, forever, { type: 'text', content: 'Best I can say.' }, forever]);
    const before = h.upstream.requests.length;
    const s = await readStream(await h.chat({ messages: ask, stream: true }));
    const seen = h.upstream.requests.slice(before);
    expect(seen).toHaveLength(6);
    for (const req of seen.slice(0, 5)) expect(toolNames(req.body)).toEqual(['spawn_agent']);
    expect(seen[5]!.body.tools).toBeUndefined();
    expect(seen[5]!.body.messages.at(-1)).toEqual({ role: 'user', content: FINAL_TURN_INSTRUCTION });
    expect(FINAL_TURN_INSTRUCTION).toMatch(/answer now with what you have.*say plainly what you could not check/i);
    // Turns 1..5 each carried one call and its result; the instruction is not part of the history before turn 6.
    expect(toolMessages(seen[5]!.body)).toHaveLength(5);
    expect(toolMessages(seen[4]!.body).every((m) => m.content.error === 'unknown_tool')).toBe(true);
    expect(s.finishReasons).toEqual(['stop']);
    expect(s.content.endsWith('Best I can say.')).toBe(true);
  });

  it('a tool call on the sixth turn is not served: finish_reason stays stop, never tool_calls', async () => {
    const forever = { type: 'tool_calls' as const, calls: [{ name: 'web_search', arguments: '{}' }] };
    h.script([forever, forever, forever, forever, forever, forever, forever]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    const body = (await r.json()) as any;
    expect(h.upstream.requests.length - before).toBe(6);
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].message.tool_calls).toBeUndefined();
  });

  it('parallel calls of one turn come back in call order', async () => {
    h.script([
      {
        type: 'tool_calls',
        calls: [
          { id: 'a', name: 'zeta', arguments: '{}' },
          { id: 'b', name: 'spawn_agent', arguments: '{"role":"nobody"}' },
          { id: 'c', name: 'alpha', arguments: 'not json' },
        ],
      },
      { type: 'text', content: 'ok' },
    ]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask })).json();
    const results = toolMessages(h.upstream.requests[before + 1]!.body);
    expect(results.map((m) => m.tool_call_id)).toEqual(['a', 'b', 'c']);
    expect(results[0]!.content).toMatchObject({ ok: false, error: 'unknown_tool' });
    expect(results[1]!.content).toEqual({ error: 'invalid_arguments' });
    expect(results[2]!.content).toMatchObject({ ok: false, error: 'unknown_tool' });
  });
});

describe('what real clients send and expect', () => {
  const preambleThenJson = () =>
    h.script([
      { type: 'tool_calls', content: ['Let me ', 'look that up. '], calls: [{ id: 'j1', name: 'web_search', arguments: '{"query":"capital"}' }] },
      { type: 'text', content: ['{"name":', '"Paris"}'] },
    ]);
  /** Catalogue mode, then proxy mode. */
  const bothModes: Record<string, string>[] = [{}, { 'x-drael-server-tools': '0' }];
  const jsonSchema = { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } };

  it("response_format json_schema: the answer is the last turn's JSON alone, streamed and not; the preamble stays in the history the model sees", async () => {
    preambleThenJson();
    const before = h.upstream.requests.length;
    const whole = (await (await h.chat({ messages: ask, response_format: jsonSchema })).json()) as any;
    expect(JSON.parse(whole.choices[0].message.content)).toEqual({ name: 'Paris' });
    expect(h.upstream.requests[before]!.body.response_format).toEqual(jsonSchema);
    expect(h.upstream.requests[before + 1]!.body.messages.at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look that up. ' });

    preambleThenJson();
    const s = await readStream(await h.chat({ messages: ask, stream: true, response_format: { type: 'json_object' } }));
    expect(JSON.parse(s.content)).toEqual({ name: 'Paris' });
    expect(s.finishReasons).toEqual(['stop']);
  });

  it('without a JSON format the preamble is still part of the answer (prose)', async () => {
    preambleThenJson();
    const whole = (await (await h.chat({ messages: ask, response_format: { type: 'text' } })).json()) as any;
    expect(whole.choices[0].message.content).toBe('Let me look that up. \n\n{"name":"Paris"}');
  });

  it('history as openai-python dumps it (tool_calls, function_call, audio null) and tools: null are accepted: null is "not given"', async () => {
    const history = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Bonjour', refusal: null, annotations: [], audio: null, function_call: null, tool_calls: null },
      { role: 'user', content: 'And now?' },
    ];
    for (const headers of bothModes) {
      h.script([{ type: 'text', content: 'ok' }]);
      const r = await h.chat({ messages: history, tools: null }, headers);
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect(((await r.json()) as any).choices[0].message.content).toBe('ok');
    }
    // tools: null is no client tools: the catalogue is offered.
    expect(toolNames(h.upstream.requests.at(-2)!.body)).toEqual(['spawn_agent']);
    // So is an empty list (it carries no tool; OpenAI refuses an empty tools list anyway).
    for (const empty of [{ tools: [] }, { functions: [] }]) {
      h.script([{ type: 'text', content: 'ok' }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: history, ...empty });
      expect(r.status, JSON.stringify(empty)).toBe(200);
      await r.json();
      expect(toolNames(h.upstream.requests[before]!.body), JSON.stringify(empty)).toEqual(['spawn_agent']);
    }
  });

  it('logprobs the upstream sends reach the client in catalogue mode, streamed (each chunk with its text) and not', async () => {
    const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...Buffer.from(token)], top_logprobs: [{ token, logprob, bytes: [...Buffer.from(token)] }] });
    const tokens = [entry('Hi', -0.1), entry(' there', -0.25)];
    const chunk = (choice: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: 'u1', object: 'chat.completion.chunk', created: 1, model: 'upstream-model', choices: [{ index: 0, ...choice }] })}\n\n`;
    h.script([
      {
        type: 'raw',
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body:
          chunk({ delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }) +
          chunk({ delta: { content: 'Hi' }, logprobs: { content: [tokens[0]] }, finish_reason: null }) +
          chunk({ delta: { content: ' there' }, logprobs: { content: [tokens[1]] }, finish_reason: null }) +
          chunk({ delta: {}, logprobs: null, finish_reason: 'stop' }) +
          'data: [DONE]\n\n',
      },
    ]);
    const s = await readStream(await h.chat({ messages: ask, stream: true, logprobs: true, top_logprobs: 1 }));
    expect(s.content).toBe('Hi there');
    expect(s.chunks.flatMap((c) => c.choices?.[0]?.logprobs?.content ?? [])).toEqual(tokens);

    h.script([
      {
        type: 'raw',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'u2',
          object: 'chat.completion',
          created: 1,
          model: 'upstream-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, logprobs: { content: tokens }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        }),
      },
    ]);
    const before = h.upstream.requests.length;
    const whole = (await (await h.chat({ messages: ask, logprobs: true, top_logprobs: 1 })).json()) as any;
    expect(h.upstream.requests[before]!.body).toMatchObject({ logprobs: true, top_logprobs: 1 });
    expect(whole.choices[0]).toMatchObject({ message: { content: 'Hi there' }, logprobs: { content: tokens } });
  });

  it('a long whole answer with logprobs is answered, not a 500 (its 200,000 entries come in one piece: a spread of them overflowed the stack)', async () => {
    const many = Array.from({ length: 200_000 }, (_, i) => ({ token: 'a', logprob: -i / 1e6, bytes: [97], top_logprobs: [] }));
    h.script([
      {
        type: 'raw',
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'u3',
          object: 'chat.completion',
          created: 1,
          model: 'upstream-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'a'.repeat(200_000) }, logprobs: { content: many }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 200_000, total_tokens: 200_003 },
        }),
      },
    ]);
    const r = await h.chat({ messages: ask, logprobs: true });
    expect(r.status).toBe(200);
    const whole = (await r.json()) as any;
    expect(whole.choices[0].logprobs.content).toHaveLength(200_000);
    expect(whole.choices[0].logprobs.content[199_999]).toEqual(many[199_999]);
  });

  it("Drael's own frame key, sent back in a client's history, goes no further: catalogue and proxy mode alike", async () => {
    const echoed = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Done.', drael: { event: 'subagent_done', agent: 'a1', ok: true } },
      { role: 'user', content: 'Thanks' },
    ];
    for (const headers of bothModes) {
      h.script([{ type: 'text', content: 'ok' }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: echoed }, headers);
      expect(r.status).toBe(200);
      await r.json();
      const sent = h.upstream.requests[before]!.body.messages.find((m: any) => m.role === 'assistant');
      expect(sent, JSON.stringify(headers)).toEqual({ role: 'assistant', content: 'Done.' });
    }
  });
});

describe("the client's output limit bounds the whole answer, not each turn", () => {
  // It went to every turn as given: a client's max_tokens 40 could be generated six times over
  // (and billed so), the usage it got back saying more completion tokens than it allowed.
  const toolTurn = (completion: number) => ({
    type: 'tool_calls' as const,
    calls: [{ id: 'c1', name: 'web_search', arguments: '{"query":"x"}' }],
    usage: { prompt_tokens: 10, completion_tokens: completion },
  });

  it('each turn is sent what the earlier turns left of max_tokens (or max_completion_tokens, under the name the client used)', async () => {
    for (const field of ['max_tokens', 'max_completion_tokens']) {
      h.script([toolTurn(30), { type: 'text', content: 'done', usage: { prompt_tokens: 20, completion_tokens: 5 } }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: ask, [field]: 40 });
      expect(r.status, field).toBe(200);
      const body = (await r.json()) as any;
      expect(body.choices[0], field).toMatchObject({ message: { content: 'done' }, finish_reason: 'stop' });
      const [first, second] = h.upstream.requests.slice(before);
      expect(first!.body[field], field).toBe(40);
      expect(second!.body[field], field).toBe(10);
    }
  });

  it('a limit the turns used up ends the answer with finish_reason length, no further turn asked, streamed or not', async () => {
    for (const stream of [false, true]) {
      h.script([toolTurn(40), { type: 'text', content: 'never asked' }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: ask, max_tokens: 40, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
      expect(r.status).toBe(200);
      if (stream) {
        const { chunks, finishReasons } = await readStream(r);
        expect(finishReasons).toEqual(['length']);
        expect(chunks.at(-1).usage.completion_tokens).toBe(40);
      } else {
        const body = (await r.json()) as any;
        expect(body.choices[0].finish_reason).toBe('length');
        expect(body.usage.completion_tokens).toBe(40);
      }
      expect(h.upstream.requests.length - before, String(stream)).toBe(1);
    }
  });
});

describe('mode seam', () => {
  it('x-drael-server-tools: 0 is a plain proxied completion: no catalogue', async () => {
    h.script([{ type: 'text', content: 'plain' }]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask }, { 'x-drael-server-tools': '0' });
    expect(((await r.json()) as any).choices[0].message.content).toBe('plain');
    expect(h.upstream.requests[before]!.body.tools).toBeUndefined();
  });

  it('a request with tools is the client loop: proxied as is, its tool_calls reach the client, nothing of ours added', async () => {
    h.script([{ type: 'tool_calls', calls: [{ id: 'x1', name: 'client_fn', arguments: '{"a":1}' }] }]);
    const before = h.upstream.requests.length;
    const tools = [{ type: 'function', function: { name: 'client_fn', parameters: { type: 'object' } } }];
    const r = await h.chat({ messages: ask, tools });
    const body = (await r.json()) as any;
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message.tool_calls[0].function.name).toBe('client_fn');
    expect(toolNames(h.upstream.requests[before]!.body)).toEqual(['client_fn']);
    expect(h.upstream.requests.length).toBe(before + 1);
  });

  it('x-drael-server-tools: 1 changes nothing', async () => {
    h.script([{ type: 'text', content: 'hi' }]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask }, { 'x-drael-server-tools': '1' })).json();
    expect(toolNames(h.upstream.requests[before]!.body)).toEqual(['spawn_agent']);
  });

  it('a malformed X-Drael-Session is a 400 naming the header', async () => {
    const r = await h.chat({ messages: ask }, { 'x-drael-session': '../etc' });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error).toMatchObject({ code: 'invalid_session', param: 'X-Drael-Session' });
  });

  it('n > 1 is a plain proxied completion: the client gets its candidates from the model, no catalogue', async () => {
    h.script([{ type: 'text', content: 'one of several' }]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask, n: 2 });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).choices[0].message.content).toBe('one of several');
    expect(h.upstream.requests[before]!.body).toMatchObject({ n: 2 });
    expect(h.upstream.requests[before]!.body.tools).toBeUndefined();
    // Still validated: n beyond OpenAI's bound is a 400 naming it.
    const bad = await h.chat({ messages: ask, n: 129 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe('n');
  });

  it('tool_choice is honoured or refused, never dropped: "none" is a plain completion, a forced choice is a 400', async () => {
    h.script([{ type: 'text', content: 'No tools needed.' }]);
    const before = h.upstream.requests.length;
    const plain = await h.chat({ messages: ask, tool_choice: 'none' });
    expect(plain.status).toBe(200);
    const sent = h.upstream.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.tools).toBeUndefined();
    expect(sent[0]!.body.tool_choice).toBe('none');
    for (const choice of ['required', { type: 'function', function: { name: 'web_search' } }]) {
      const r = await h.chat({ messages: ask, tool_choice: choice });
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error).toMatchObject({ code: 'invalid_request', param: 'tool_choice' });
    }
  });
});

describe('upstream failures', () => {
  it('an upstream error before any output is the HTTP error itself', async () => {
    h.script([{ type: 'error', status: 503, message: 'overloaded' }]);
    const r = await h.chat({ messages: ask, stream: true });
    expect(r.status).toBe(503);
    expect(((await r.json()) as any).error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('503') });
  });

  it('an upstream error after text was streamed is one error event, then the end', async () => {
    h.script([
      { type: 'tool_calls', content: 'Looking. ', calls: [{ name: 'nope', arguments: '{}' }] },
      { type: 'error', status: 500, message: 'boom' },
    ]);
    const s = await readStream(await h.chat({ messages: ask, stream: true }));
    expect(s.content).toBe('Looking. ');
    expect(s.chunks.at(-1).error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('500') });
    expect(s.finishReasons).toEqual([]);
  });
});

describe('client disconnect', () => {
  it('aborts the model call in progress and starts no further turn', async () => {
    h.script([
      { type: 'tool_calls', content: 'One moment. ', calls: [{ name: 'nope', arguments: '{}' }] },
      { type: 'text', content: ['alpha', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], chunkDelayMs: 300 },
      { type: 'text', content: 'never' },
    ]);
    const before = h.upstream.requests.length;
    const abortedBefore = h.upstream.aborted.length;
    const ac = new AbortController();
    const r = await h.chat({ messages: ask, stream: true }, {}, ac.signal);
    const reader = r.body!.getReader();
    let seen = '';
    while (!seen.includes('alpha')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before the second turn's text: ${seen}`);
      seen += new TextDecoder().decode(value);
    }
    ac.abort();
    await expect.poll(() => h.upstream.aborted.length, { timeout: 5_000 }).toBe(abortedBefore + 1);
    expect(h.upstream.aborted.at(-1)!.turn).toBe(1);
    await new Promise((res) => setTimeout(res, 500));
    expect(h.upstream.requests.length).toBe(before + 2);
  });
});
