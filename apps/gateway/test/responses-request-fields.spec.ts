import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { Redis } from 'ioredis';
import { eventsOf, REDIS_URL, startStack, type Stack } from './responses.support.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

// Request fields the real clients send on /v1/responses (structured outputs, images and files,
// reasoning effort) reach the upstream in chat completions' terms and come back in the response
// object; the ones Drael cannot serve (conversations, file ids, a stored response's stream) are
// refused by name instead of being dropped.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 180_000);
afterAll(async () => {
  await stack?.close();
});

const json = async (r: Response) => (await r.json()) as any;
const requestsSince = (n: number) => stack.upstream.requests.slice(n);
const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'number' } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const PERSON_FORMAT = { type: 'json_schema', name: 'person', schema: PERSON, strict: true, description: 'The person named in the text.' };

async function expectRefused(body: unknown, param: string, message: RegExp): Promise<void> {
  const before = stack.upstream.requests.length;
  const r = await stack.post(body);
  expect(r.status).toBe(400);
  const { error } = await json(r);
  expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
  expect(error.message).toMatch(message);
  // Refused before any model call.
  expect(stack.upstream.requests.length).toBe(before);
}

describe('text.format: structured outputs', () => {
  it('json_schema reaches every turn as response_format (name, schema, strict, description) and is echoed in text', async () => {
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'c1', name: 'datetime', arguments: '{}' }] },
      { type: 'text', content: '{"name":"Ada","age":36}' },
    ]);
    const before = stack.upstream.requests.length;
    const r = await stack.post({ model: 'gpt-test', input: 'Ada is 36.', tools: [{ type: 'datetime' }], text: { format: PERSON_FORMAT } });
    expect(r.status).toBe(200);
    const body = await json(r);
    expect(body.text).toEqual({ format: PERSON_FORMAT });
    expect(JSON.parse(body.output_text)).toEqual({ name: 'Ada', age: 36 });
    const sent = requestsSince(before);
    expect(sent).toHaveLength(2);
    for (const s of sent) {
      expect(s.body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'person', schema: PERSON, strict: true, description: 'The person named in the text.' },
      });
      expect(s.body.text).toBeUndefined();
    }
    // The stored response says which format it was made in.
    expect((await json(await stack.get(body.id))).text).toEqual({ format: PERSON_FORMAT });
  });

  it('a JSON format makes the answer one document: text said before a tool call is no message item, streamed or not (the preamble broke responses.parse)', async () => {
    const script = () =>
      stack.upstream.setTurns([
        { type: 'tool_calls', content: ['Let me check ', 'the date. '], calls: [{ id: 'c1', name: 'datetime', arguments: '{}' }] },
        { type: 'text', content: ['{"name":"Ada",', '"age":36}'] },
      ]);
    script();
    const before = stack.upstream.requests.length;
    const body = await json(await stack.post({ model: 'gpt-test', input: 'Ada is 36.', tools: [{ type: 'datetime' }], text: { format: PERSON_FORMAT } }));
    const messages = body.output.filter((i: any) => i.type === 'message');
    expect(messages).toHaveLength(1);
    expect(JSON.parse(body.output_text)).toEqual({ name: 'Ada', age: 36 });
    // The model still sees what it said.
    expect(requestsSince(before)[1]!.body.messages.find((m: any) => m.role === 'assistant')).toMatchObject({ content: 'Let me check the date. ' });

    script();
    const events = await eventsOf(await stack.post({ model: 'gpt-test', input: 'Ada is 36.', tools: [{ type: 'datetime' }], text: { format: PERSON_FORMAT }, stream: true }));
    const added = events.filter((e) => e.type === 'response.output_item.added' && e.item.type === 'message');
    expect(added).toHaveLength(1);
    const text = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(text)).toEqual({ name: 'Ada', age: 36 });

    script();
    const client = new OpenAI({ baseURL: `${stack.gateway.url}/v1`, apiKey: stack.auth.authorization!.slice('Bearer '.length), maxRetries: 0 });
    const parsed = await client.responses.parse({
      model: 'gpt-test',
      input: 'Ada is 36.',
      tools: [{ type: 'datetime' } as never],
      text: { format: zodTextFormat(z.object({ name: z.string(), age: z.number() }), 'person') },
    });
    expect(parsed.output_parsed).toEqual({ name: 'Ada', age: 36 });
  });

  it('json_object and an explicit text format are forwarded as such; no format asks for none', async () => {
    for (const format of [{ type: 'json_object' }, { type: 'text' }]) {
      stack.upstream.setTurns([{ type: 'text', content: '{}' }]);
      const before = stack.upstream.requests.length;
      const r = await stack.post({ model: 'gpt-test', input: 'answer in JSON', text: { format }, stream: true });
      const events = await eventsOf(r);
      expect(events[0]!.response.text).toEqual({ format });
      expect(events.at(-1)!.response.text).toEqual({ format });
      expect(requestsSince(before)[0]!.body.response_format).toEqual(format);
    }
    stack.upstream.setTurns([{ type: 'text', content: 'plain' }]);
    const before = stack.upstream.requests.length;
    const body = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    expect(body.text).toEqual({ format: { type: 'text' } });
    expect(requestsSince(before)[0]!.body).not.toHaveProperty('response_format');
  });

  it('a continuation states its own format: the previous response’s is not inherited (as with OpenAI)', async () => {
    stack.upstream.setTurns([{ type: 'text', content: '{"name":"Ada","age":36}' }]);
    const first = await json(await stack.post({ model: 'gpt-test', input: 'Ada is 36.', text: { format: PERSON_FORMAT } }));
    stack.upstream.setTurns([{ type: 'text', content: 'She is 36.' }]);
    let before = stack.upstream.requests.length;
    const plain = await json(await stack.post({ model: 'gpt-test', input: 'Say it in words.', previous_response_id: first.id }));
    expect(plain.text).toEqual({ format: { type: 'text' } });
    expect(requestsSince(before)[0]!.body).not.toHaveProperty('response_format');
    stack.upstream.setTurns([{ type: 'text', content: '{"name":"Ada","age":37}' }]);
    before = stack.upstream.requests.length;
    const again = await json(await stack.post({ model: 'gpt-test', input: 'And next year?', previous_response_id: first.id, text: { format: PERSON_FORMAT } }));
    expect(again.text).toEqual({ format: PERSON_FORMAT });
    expect(requestsSince(before)[0]!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'person' } });
  });

  it('a malformed format is a 400 naming the field', async () => {
    await expectRefused({ model: 'gpt-test', input: 'x', text: { format: { type: 'json_schema', name: 'person' } } }, 'text.format.schema', /expected record/);
    await expectRefused({ model: 'gpt-test', input: 'x', text: { format: { type: 'json_schema', name: 'a person', schema: PERSON } } }, 'text.format.name', /must match/);
    await expectRefused({ model: 'gpt-test', input: 'x', text: { format: { type: 'yaml' } } }, 'text.format.type', /Invalid/);
  });

  it('the openai SDK’s responses.parse with zodTextFormat gets its parsed object', async () => {
    stack.upstream.setTurns([{ type: 'text', content: '{"name":"Ada","age":36}' }]);
    const client = new OpenAI({ baseURL: `${stack.gateway.url}/v1`, apiKey: stack.auth.authorization!.slice('Bearer '.length), maxRetries: 0 });
    const before = stack.upstream.requests.length;
    const parsed = await client.responses.parse({
      model: 'gpt-test',
      input: 'Ada is 36.',
      text: { format: zodTextFormat(z.object({ name: z.string(), age: z.number() }), 'person') },
    });
    expect(parsed.output_parsed).toEqual({ name: 'Ada', age: 36 });
    expect(requestsSince(before)[0]!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'person', strict: true } });
  });
});

describe('input_image and input_file parts', () => {
  const PNG = 'data:image/png;base64,iVBORw0KGgo=';
  const PDF = 'data:application/pdf;base64,JVBERi0=';

  it('become chat image_url and file parts, in order, beside the text; a continuation sends them again', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'A cat and an invoice.' }]);
    const before = stack.upstream.requests.length;
    const r = await stack.post({
      model: 'gpt-test',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Describe these.' },
            { type: 'input_image', image_url: PNG, detail: 'high' },
            { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
            { type: 'input_file', filename: 'invoice.pdf', file_data: PDF },
          ],
        },
      ],
    });
    expect(r.status).toBe(200);
    const first = await json(r);
    const content = [
      { type: 'text', text: 'Describe these.' },
      { type: 'image_url', image_url: { url: PNG, detail: 'high' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      { type: 'file', file: { filename: 'invoice.pdf', file_data: PDF } },
    ];
    expect(requestsSince(before)[0]!.body.messages).toEqual([{ role: 'user', content }]);

    stack.upstream.setTurns([{ type: 'text', content: 'The cat is grey.' }]);
    const next = stack.upstream.requests.length;
    await json(await stack.post({ model: 'gpt-test', input: 'What colour is the cat?', previous_response_id: first.id }));
    expect(requestsSince(next)[0]!.body.messages[0]).toEqual({ role: 'user', content });
  });

  it('what cannot be served is a 400 naming the part’s field, never a part dropped', async () => {
    const user = (part: object) => ({ model: 'gpt-test', input: [{ role: 'user', content: [{ type: 'input_text', text: 'look' }, part] }] });
    await expectRefused(user({ type: 'input_image', file_id: 'file-abc' }), 'input[0].content[1].file_id', /not served/);
    await expectRefused(user({ type: 'input_image', detail: 'auto' }), 'input[0].content[1].image_url', /needs image_url/);
    await expectRefused(user({ type: 'input_file', file_id: 'file-abc' }), 'input[0].content[1].file_id', /not served/);
    await expectRefused(user({ type: 'input_file', file_url: 'https://example.com/a.pdf' }), 'input[0].content[1].file_url', /not served/);
    await expectRefused(user({ type: 'input_file', file_data: PDF }), 'input[0].content[1].filename', /filename/);
    await expectRefused(user({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }), 'input[0].content[1].type', /'input_audio' is not served/);
    await expectRefused(
      {
        model: 'gpt-test',
        input: [
          { role: 'system', content: [{ type: 'input_image', image_url: PNG }] },
          { role: 'user', content: 'hi' },
        ],
      },
      'input[0].content[0].type',
      /only in user messages/,
    );
    await expectRefused(
      { model: 'gpt-test', input: [{ type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: PNG }] }] },
      'input[0].output[0].type',
      /reaches the model as text/,
    );
  });
});

describe('reasoning.effort', () => {
  it('reaches the upstream as reasoning_effort and is echoed; without it neither appears', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'thought' }]);
    let before = stack.upstream.requests.length;
    const body = await json(await stack.post({ model: 'gpt-test', input: 'think', reasoning: { effort: 'high' } }));
    expect(body.reasoning).toEqual({ effort: 'high', summary: null });
    expect(requestsSince(before)[0]!.body.reasoning_effort).toBe('high');
    expect(requestsSince(before)[0]!.body.reasoning).toBeUndefined();

    stack.upstream.setTurns([{ type: 'text', content: 'plain' }]);
    before = stack.upstream.requests.length;
    const plain = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    expect(plain.reasoning).toEqual({ effort: null, summary: null });
    expect(requestsSince(before)[0]!.body).not.toHaveProperty('reasoning_effort');

    await expectRefused({ model: 'gpt-test', input: 'x', reasoning: { effort: 'extreme' } }, 'reasoning.effort', /Invalid option/);
  });

  it('a response stored before reasoning was echoed reads back with reasoning {effort: null}', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'old' }]);
    const { id } = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    // The record as an earlier gateway wrote it: no `reasoning` in the response object.
    const redis = new Redis(REDIS_URL);
    try {
      const [key] = await redis.keys(`${stack.keyPrefix}responses:*${id}`);
      const record = JSON.parse((await redis.get(key!))!);
      delete record.response.reasoning;
      await redis.set(key!, JSON.stringify(record), 'KEEPTTL');
    } finally {
      redis.disconnect();
    }
    const body = await json(await stack.get(id));
    expect(body).toMatchObject({ id, output_text: 'old', reasoning: { effort: null, summary: null } });
  });
});

describe('item_reference', () => {
  // The Vercel AI SDK (store on, its default) sends an earlier answer back as {type: 'item_reference', id}
  // instead of the message: it was dropped unseen, and the model lost its own side of the conversation.
  it('an output item of a stored response of the account is read in its place, in order', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'the first answer' }]);
    const first = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    const item = first.output.find((o: any) => o.type === 'message');
    stack.upstream.setTurns([{ type: 'text', content: 'the second answer' }]);
    const before = stack.upstream.requests.length;
    const r = await stack.post({
      model: 'gpt-test',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'item_reference', id: item.id },
        { role: 'user', content: 'and then?' },
      ],
    });
    expect(r.status).toBe(200);
    expect((await json(r)).output_text).toBe('the second answer');
    expect(requestsSince(before)[0]!.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'the first answer' },
      { role: 'user', content: 'and then?' },
    ]);
  });

  it('an id that names no stored output item of the account (unknown, another account’s, not stored) is a 404 naming it, before any model call', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'kept' }]);
    const first = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    const id = first.output.find((o: any) => o.type === 'message').id;
    stack.upstream.setTurns([{ type: 'text', content: 'unstored' }]);
    const unstored = await json(await stack.post({ model: 'gpt-test', input: 'hi', store: false }));
    const unstoredId = unstored.output.find((o: any) => o.type === 'message').id;
    const other = await stack.newKey();
    const cases: Array<[string, Record<string, string> | undefined]> = [
      ['msg_nope', undefined],
      [`msg_${'0'.repeat(32)}_00000000`, undefined],
      [unstoredId, undefined],
      [id, other],
    ];
    for (const [ref, auth] of cases) {
      const before = stack.upstream.requests.length;
      const r = await stack.post(
        {
          model: 'gpt-test',
          input: [
            { role: 'user', content: 'hi' },
            { type: 'item_reference', id: ref },
          ],
        },
        auth,
      );
      expect(r.status, ref).toBe(404);
      expect((await json(r)).error, ref).toMatchObject({ type: 'not_found_error', param: 'input[1].id', message: expect.stringContaining(ref) });
      expect(stack.upstream.requests.length, ref).toBe(before);
    }
  });
});

describe('item_reference, bounded', () => {
  it('references reading in more than the body limit together are a 400 naming the one past it, before any model call', async () => {
    // A few bytes a reference, the whole stored item each: 32 references to one 8 MiB answer held
    // the event loop 7.6 s and took 537 MB. A 3 MiB answer, ten times, fits the 32 MiB body limit; eleven do not.
    stack.upstream.setTurns([{ type: 'text', content: 'x'.repeat(3 * 1024 * 1024) }]);
    const first = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    const id = first.output.find((o: any) => o.type === 'message').id;
    const refs = Array.from({ length: 32 }, () => ({ type: 'item_reference', id }));
    await expectRefused({ model: 'gpt-test', store: false, input: [{ role: 'user', content: 'hi' }, ...refs] }, 'input[11]', /body limit/);
  });
});

describe('what Drael does not serve is refused by name', () => {
  it('conversation (a string or an object) is a 400 naming it, before any model call', async () => {
    await expectRefused({ model: 'gpt-test', input: 'hi', conversation: 'conv_123' }, 'conversation', /previous_response_id/);
    await expectRefused({ model: 'gpt-test', input: 'hi', conversation: { id: 'conv_123' } }, 'conversation', /previous_response_id/);
  });

  it('a forced tool_choice (required, a named function, a hosted tool) with no tools is a 400 naming tool_choice, as OpenAI answers it; auto and none stay served', async () => {
    // It was dropped unseen: the model answered without the tool the client forced.
    await expectRefused({ model: 'gpt-test', input: 'hi', tool_choice: 'required' }, 'tool_choice', /tools/);
    await expectRefused({ model: 'gpt-test', input: 'hi', tool_choice: { type: 'function', name: 'lookup' } }, 'tool_choice', /lookup/);
    await expectRefused({ model: 'gpt-test', input: 'hi', tools: [], tool_choice: { type: 'web_search' } }, 'tool_choice', /web_search/);
    for (const choice of ['auto', 'none']) {
      stack.upstream.setTurns([{ type: 'text', content: 'fine' }]);
      const r = await stack.post({ model: 'gpt-test', input: 'hi', tool_choice: choice });
      expect(r.status, choice).toBe(200);
      expect((await json(r)).output_text).toBe('fine');
    }
  });

  it('metadata of more than 16 pairs is a 400 naming it, as OpenAI bounds it; 16 are stored and echoed', async () => {
    const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
    await expectRefused({ model: 'gpt-test', input: 'hi', metadata: pairs(17) }, 'metadata', /16/);
    stack.upstream.setTurns([{ type: 'text', content: 'fine' }]);
    const r = await stack.post({ model: 'gpt-test', input: 'hi', metadata: pairs(16) });
    expect(r.status).toBe(200);
    expect((await json(r)).metadata).toEqual(pairs(16));
  });

  it('truncation other than auto or disabled is a 400 naming it; either of those is served (Drael never truncates: it answers disabled)', async () => {
    await expectRefused({ model: 'gpt-test', input: 'hi', truncation: 'nope' }, 'truncation', /auto|disabled/);
    await expectRefused({ model: 'gpt-test', input: 'hi', truncation: 1 }, 'truncation', /auto|disabled/);
    for (const truncation of ['auto', 'disabled', null]) {
      stack.upstream.setTurns([{ type: 'text', content: 'fine' }]);
      const r = await stack.post({ model: 'gpt-test', input: 'hi', truncation });
      expect(r.status, String(truncation)).toBe(200);
      expect((await json(r)).truncation).toBe('disabled');
    }
  });

  it('GET /v1/responses/{id}?stream=true is a 400 naming stream; without it (or stream=false) the stored response', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'kept' }]);
    const { id } = await json(await stack.post({ model: 'gpt-test', input: 'hi' }));
    const r = await stack.get(`${id}?stream=true`);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect((await json(r)).error).toMatchObject({ type: 'invalid_request_error', param: 'stream' });
    expect((await json(await stack.get(`${id}?stream=false`))).output_text).toBe('kept');
    expect((await json(await stack.get(id))).output_text).toBe('kept');

    // The SDK's retrieve with stream: true now fails typed instead of reading an empty stream.
    const client = new OpenAI({ baseURL: `${stack.gateway.url}/v1`, apiKey: stack.auth.authorization!.slice('Bearer '.length), maxRetries: 0 });
    await expect(client.responses.retrieve(id, { stream: true })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe('user, safety_identifier, prompt_cache_key, service_tier', () => {
  it('reach every upstream turn under their chat-completions names; store and metadata stay Drael’s', async () => {
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'c1', name: 'datetime', arguments: '{}' }] },
      { type: 'text', content: 'done' },
    ]);
    const before = stack.upstream.requests.length;
    const fields = { user: 'user-42', safety_identifier: 'sid-42', prompt_cache_key: 'cache-42', service_tier: 'flex' };
    const r = await stack.post({ model: 'gpt-test', input: 'when?', tools: [{ type: 'datetime' }], store: true, metadata: { team: 'a' }, ...fields });
    expect(r.status).toBe(200);
    // The response object echoes them, created and retrieved, as OpenAI's does.
    const echoed = fields;
    const body = await json(r);
    expect(body).toMatchObject(echoed);
    expect(await json(await stack.get(body.id))).toMatchObject(echoed);
    const sent = requestsSince(before);
    expect(sent).toHaveLength(2);
    for (const s of sent) {
      expect(s.body).toMatchObject(fields);
      expect(s.body).not.toHaveProperty('store');
      expect(s.body).not.toHaveProperty('metadata');
    }
  });

  it('without them none is sent; a malformed one is a 400 naming it', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'plain' }]);
    const before = stack.upstream.requests.length;
    const plain = await stack.post({ model: 'gpt-test', input: 'hi' });
    expect(plain.status).toBe(200);
    const answer = await json(plain);
    for (const field of ['user', 'safety_identifier', 'prompt_cache_key', 'service_tier']) {
      expect(requestsSince(before)[0]!.body).not.toHaveProperty(field);
      expect(answer).not.toHaveProperty(field);
    }
    await expectRefused({ model: 'gpt-test', input: 'x', service_tier: 'fastest' }, 'service_tier', /Invalid option/);
    await expectRefused({ model: 'gpt-test', input: 'x', user: 42 }, 'user', /expected string/);
    await expectRefused({ model: 'gpt-test', input: 'x', safety_identifier: 'x'.repeat(65) }, 'safety_identifier', /64/);
  });
});
