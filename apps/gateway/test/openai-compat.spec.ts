import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse } from '@drael/test-support';
import { startLoopHarness, toolNames, type LoopHarness } from './turn-loop.support.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

/** The OpenAI routes and fields clients call, against the built gateway, real billing and a scripted upstream. */
let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({
    models: {
      'gpt-test': { model: 'upstream-model' },
      'vendor/model-x': { model: 'upstream-model' },
    },
    // A second of silence in a catalogue stream is answered with an SSE comment (the default is 15 s).
    env: { STREAM_KEEPALIVE_MS: '1000' },
  });
}, 180_000);
afterAll(async () => {
  await h?.close();
});

const ask = [{ role: 'user', content: 'Weather in Paris?' }];
const get = (path: string, apiKey = h.apiKey) => fetch(`${h.gateway.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
const post = (path: string, body: unknown, apiKey = h.apiKey) =>
  fetch(`${h.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('GET /v1/models/{id}', () => {
  it('retrieves an alias, one with a slash too (as written or encoded), and answers 404 model_not_found in the envelope for an unknown one', async () => {
    for (const path of ['/v1/models/gpt-test', '/v1/models/vendor/model-x', '/v1/models/vendor%2Fmodel-x']) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(await r.json()).toMatchObject({ object: 'model', owned_by: 'drael', id: path.includes('gpt') ? 'gpt-test' : 'vendor/model-x' });
    }
    const unknown = await get('/v1/models/nope');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: { message: expect.stringContaining('nope'), type: 'not_found_error', param: 'model', code: 'model_not_found' },
    });
    expect((await fetch(`${h.gateway.url}/v1/models/gpt-test`)).status).toBe(401);
  });
});

describe('x-drael-server-tools', () => {
  it('1, true, on, yes (any case) keep the catalogue; 0, false, off, no turn it off', async () => {
    for (const value of ['1', 'true', 'TRUE', 'on', 'Yes', ' 1 ']) {
      h.script([{ type: 'text', content: 'hi' }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: ask }, { 'x-drael-server-tools': value });
      expect(r.status, value).toBe(200);
      await r.json();
      expect(toolNames(h.upstream.requests[before]!.body), value).toEqual(['spawn_agent']);
    }
    for (const value of ['0', 'false', 'False', 'off', 'NO']) {
      h.script([{ type: 'text', content: 'plain' }]);
      const before = h.upstream.requests.length;
      const r = await h.chat({ messages: ask }, { 'x-drael-server-tools': value });
      expect(r.status, value).toBe(200);
      expect(((await r.json()) as any).choices[0].message.content).toBe('plain');
      expect(h.upstream.requests[before]!.body.tools, value).toBeUndefined();
    }
  });

  it('any other value is a 400 naming the header, and the upstream is never asked', async () => {
    const before = h.upstream.requests.length;
    for (const value of ['2', 'maybe', 'enabled', '1,0', 'nope']) {
      const r = await h.chat({ messages: ask }, { 'x-drael-server-tools': value });
      expect(r.status, value).toBe(400);
      expect(((await r.json()) as any).error, value).toMatchObject({
        type: 'invalid_request_error',
        param: 'x-drael-server-tools',
        message: expect.stringContaining('x-drael-server-tools'),
      });
    }
    // The same on the Nest route (a JSON media type other than application/json), and with client tools.
    const viaNest = await fetch(`${h.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/vnd.drael+json', 'x-drael-server-tools': 'false-ish' },
      body: JSON.stringify({ model: 'gpt-test', messages: ask, tools: [{ type: 'function', function: { name: 'f' } }] }),
    });
    expect(viaNest.status).toBe(400);
    expect(((await viaNest.json()) as any).error.param).toBe('x-drael-server-tools');
    expect(h.upstream.requests.length).toBe(before);
  });
});

describe('legacy functions / function_call', () => {
  it('are client tools: proxied to the upstream as sent, never the catalogue, and the function result turn goes through too', async () => {
    const functions = [{ name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    h.script([{ type: 'text', content: 'calling' }]);
    const before = h.upstream.requests.length;
    // Even with the catalogue asked for explicitly: the client's own tools win.
    const r = await h.chat({ messages: ask, functions, function_call: 'auto' }, { 'x-drael-server-tools': '1' });
    expect(r.status).toBe(200);
    await r.json();
    const sent = h.upstream.requests[before]!.body;
    expect(sent.functions).toEqual(functions);
    expect(sent.function_call).toBe('auto');
    expect(sent.tools).toBeUndefined();
    expect(h.upstream.requests.length).toBe(before + 1);

    h.script([{ type: 'text', content: '18°C' }]);
    const messages = [
      ...ask,
      { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { role: 'function', name: 'get_weather', content: '{"temp_c":18}' },
    ];
    const second = await h.chat({ messages, functions });
    expect(second.status).toBe(200);
    expect(((await second.json()) as any).choices[0].message.content).toBe('18°C');
    expect(h.upstream.requests[before + 1]!.body.messages).toEqual(messages);

    // function_call alone (e.g. "none") is the client's loop as well.
    h.script([{ type: 'text', content: 'no call' }]);
    await (await h.chat({ messages: ask, function_call: 'none' })).json();
    expect(h.upstream.requests[before + 2]!.body.tools).toBeUndefined();
  });
});

describe('responses: input items and cancel', () => {
  it('GET /v1/responses/{id}/input_items lists the input as OpenAI does (newest first, after/limit/order, has_more, first_id, last_id)', async () => {
    h.script([{ type: 'text', content: 'done' }]);
    const created = (await (
      await post('/v1/responses', {
        model: 'gpt-test',
        input: [
          { role: 'user', content: 'one' },
          { role: 'assistant', content: 'two' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'three' }] },
        ],
      })
    ).json()) as any;
    expect(created.status).toBe('completed');
    const items = async (query = '') => {
      const r = await get(`/v1/responses/${created.id}/input_items${query}`);
      expect(r.status, query).toBe(200);
      return (await r.json()) as any;
    };
    const textOf = (item: any) => item.content.map((p: any) => p.text).join('');

    const all = await items();
    expect(all).toMatchObject({ object: 'list', has_more: false });
    expect(all.data.map(textOf)).toEqual(['three', 'two', 'one']);
    expect(all.data.map((i: any) => i.type)).toEqual(['message', 'message', 'message']);
    expect(all.data[2]).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: 'one' }] });
    expect(all.data[1]).toMatchObject({ role: 'assistant', content: [{ type: 'output_text', text: 'two' }] });
    expect(new Set(all.data.map((i: any) => i.id)).size).toBe(3);
    expect(all.first_id).toBe(all.data[0].id);
    expect(all.last_id).toBe(all.data[2].id);

    const page1 = await items('?limit=2');
    expect(page1.data.map(textOf)).toEqual(['three', 'two']);
    expect(page1.has_more).toBe(true);
    const page2 = await items(`?limit=2&after=${page1.last_id}`);
    expect(page2.data.map(textOf)).toEqual(['one']);
    expect(page2.has_more).toBe(false);
    expect((await items('?order=asc')).data.map(textOf)).toEqual(['one', 'two', 'three']);

    // A plain string input is one user message.
    h.script([{ type: 'text', content: 'ok' }]);
    const plain = (await (await post('/v1/responses', { model: 'gpt-test', input: 'just text' })).json()) as any;
    const plainItems = (await (await get(`/v1/responses/${plain.id}/input_items`)).json()) as any;
    expect(plainItems.data).toEqual([
      { id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'just text' }] },
    ]);

    const badLimit = await get(`/v1/responses/${created.id}/input_items?limit=500`);
    expect(badLimit.status).toBe(400);
    expect(((await badLimit.json()) as any).error.param).toBe('limit');
    const badAfter = await get(`/v1/responses/${created.id}/input_items?after=msg_nothere`);
    expect(badAfter.status).toBe(400);
    expect(((await badAfter.json()) as any).error.param).toBe('after');
    expect((await get('/v1/responses/resp_unknown/input_items')).status).toBe(404);
    // Another account's response does not exist for this key.
    const other = await h.newKey();
    expect((await get(`/v1/responses/${created.id}/input_items`, other.api_key)).status).toBe(404);
  });

  it("POST /v1/responses/{id}/cancel: a foreground response is refused with 400 as OpenAI refuses it; unknown or another account's is 404", async () => {
    h.script([{ type: 'text', content: 'done' }]);
    const created = (await (await post('/v1/responses', { model: 'gpt-test', input: 'hi' })).json()) as any;
    const cancel = await post(`/v1/responses/${created.id}/cancel`, undefined);
    expect(cancel.status).toBe(400);
    expect(await cancel.json()).toEqual({ error: { message: 'Cannot cancel a synchronous response.', type: 'invalid_request_error', param: null, code: 'invalid_request' } });
    // Still there, unchanged.
    expect(((await (await get(`/v1/responses/${created.id}`)).json()) as any).status).toBe('completed');

    // A background response, the only kind OpenAI cancels, is not made here: asking for one is a 400 naming it.
    const background = await post('/v1/responses', { model: 'gpt-test', input: 'hi', background: true });
    expect(background.status).toBe(400);
    expect(((await background.json()) as any).error).toMatchObject({ param: 'background', message: expect.stringContaining('foreground') });

    const unknown = await post('/v1/responses/resp_unknown/cancel', undefined);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
    const other = await h.newKey();
    expect((await post(`/v1/responses/${created.id}/cancel`, undefined, other.api_key)).status).toBe(404);
  });
});

describe('errors name no internal subject', () => {
  it('a backend that is not running is a 503 naming the service, not its NATS subject', async () => {
    // This harness runs no sandbox.
    const r = await get('/v1/sessions');
    expect(r.status).toBe(503);
    const { error } = (await r.json()) as any;
    expect(error.message).toContain('sandbox service');
    expect(error.message).not.toMatch(/\.v\d\b|sandbox\.[a-z]/);
  });
});

describe('a long silence in a catalogue stream (tools running, a slow first token)', () => {
  it('opens the stream and sends SSE comments, which a proxy in front sees as traffic and the OpenAI client ignores', async () => {
    const slow = { type: 'text' as const, content: ['after ', 'the wait'], pauseAfterChunks: 1 };
    h.script([slow]);
    const r = await post('/v1/chat/completions', { model: 'gpt-test', messages: ask, stream: true });
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value, { stream: true });
    h.upstream.resume();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const events = parseSse(text) as any[];
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('')).toBe('after the wait');

    h.script([slow]);
    const client = new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey: h.apiKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Weather in Paris?' }], stream: true });
    const resume = setTimeout(() => h.upstream.resume(), 2_500);
    let content = '';
    try {
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
    } finally {
      clearTimeout(resume);
    }
    expect(content).toBe('after the wait');
  });
});
