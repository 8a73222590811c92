import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';

/** The official OpenAI SDK, pointed at the gateway like any user's client. */
let upstream: ScriptedUpstream;
let gateway: GatewayProcess;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  gateway = await startGatewayProcess({
    DRAEL_NATS_PREFIX: testPrefix('sdk'),
    DRAEL_MODELS: JSON.stringify({ 'drael-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
  });
  client = new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey: gateway.apiKey,
    maxRetries: 0,
    // These tests are about the plain proxy; the turn loop has its own tests.
    defaultHeaders: { 'x-drael-server-tools': '0' },
  });
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

describe('openai SDK against the gateway', () => {
  it('lists models', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['drael-test']);
  });

  it('non-streaming completion', async () => {
    upstream.setTurns([{ type: 'text', content: 'Bonjour', usage: { prompt_tokens: 4, completion_tokens: 1 } }]);
    const c = await client.chat.completions.create({ model: 'drael-test', messages: [{ role: 'user', content: 'Say hi in French' }] });
    expect(c.choices[0]?.message.content).toBe('Bonjour');
    expect(c.usage?.total_tokens).toBe(5);
  });

  it('streaming completion, with usage', async () => {
    upstream.setTurns([{ type: 'text', content: ['One', ', two', ', three'], usage: { prompt_tokens: 5, completion_tokens: 3 } }]);
    const stream = await client.chat.completions.create({
      model: 'drael-test',
      messages: [{ role: 'user', content: 'Count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('One, two, three');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(3);
  });

  it('client tools round trip: the tool call goes out, the tool result comes back, the model answers', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      },
    ];
    upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'call_w1', name: 'get_weather', arguments: ['{"city"', ':"Par', 'is"}'] }] },
      { type: 'text', content: ['It is ', '18°C in Paris.'] },
    ]);
    const first = upstream.requests.length;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];

    // Turn 1 (streamed): the SDK's stream helper assembles the split arguments.
    const runner = client.chat.completions.stream({ model: 'drael-test', messages, tools });
    const turn1 = await runner.finalChatCompletion();
    const call = turn1.choices[0]?.message.tool_calls?.[0];
    expect(turn1.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });

    // Turn 2: the client ran its tool and sends the result back.
    messages.push(turn1.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: '{"temp_c":18}' });
    const turn2 = await client.chat.completions.create({ model: 'drael-test', messages, tools });
    expect(turn2.choices[0]?.message.content).toBe('It is 18°C in Paris.');

    const sent = upstream.requests[first + 1]!.body;
    expect(sent.tools).toEqual(tools);
    expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_w1', content: '{"temp_c":18}' });
    expect(sent.messages.at(-2).tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
  });

  it('errors surface as the SDK typed errors', async () => {
    await expect(client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      type: 'not_found_error',
    });
  });

  it('a large request with a wrong key, and one over the body limit, are typed SDK errors (401, 413), not connection errors', async () => {
    // (This SDK reads while it writes; a client that writes first is edge-auth.spec.ts's.)
    const wrongKey = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-not-a-drael-key', maxRetries: 0 });
    const big = 'x'.repeat(8 * 1024 * 1024);
    const refusal = await wrongKey.chat.completions.create({ model: 'drael-test', messages: [{ role: 'user', content: big }] }).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(refusal).toMatchObject({ status: 401 });
    // Over the body limit (32 MiB) with the right key: 413, read the same way.
    const tooLarge = await client.chat.completions
      .create({ model: 'drael-test', messages: [{ role: 'user', content: 'x'.repeat(40 * 1024 * 1024) }] })
      .catch((err: unknown) => err);
    expect(tooLarge).toBeInstanceOf(OpenAI.APIError);
    expect(tooLarge).toMatchObject({ status: 413 });
  });
});

describe("openai SDK: retrieve a model, a response's input items, cancel", () => {
  it('models.retrieve: an alias, and 404 model_not_found for an unknown one', async () => {
    expect(await client.models.retrieve('drael-test')).toMatchObject({ id: 'drael-test', object: 'model', owned_by: 'drael' });
    await expect(client.models.retrieve('nope')).rejects.toMatchObject({ status: 404, code: 'model_not_found', type: 'not_found_error' });
  });

  it('responses.inputItems.list pages through the input; responses.cancel of a foreground response is refused as OpenAI refuses it', async () => {
    upstream.setTurns([{ type: 'text', content: 'ok' }]);
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'second' },
      { role: 'user', content: 'third' },
    ];
    const created = await client.responses.create({ model: 'drael-test', input });
    const texts: string[] = [];
    // Default order is newest first; a page of 2 makes the SDK follow `after` / `has_more`.
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2 })) {
      expect(item.id).toBeTruthy();
      const content = item.type === 'message' ? item.content : [];
      texts.push(content.map((p) => ('text' in p ? p.text : '')).join(''));
    }
    expect(texts).toEqual(['third', 'second', 'first']);
    const asc = await client.responses.inputItems.list(created.id, { order: 'asc', limit: 1 });
    expect(asc.data).toHaveLength(1);
    expect(asc.has_more).toBe(true);

    await expect(client.responses.cancel(created.id)).rejects.toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: expect.stringContaining('Cannot cancel a synchronous response.'),
    });
    await expect(client.responses.cancel('resp_unknown')).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.inputItems.list('resp_unknown').then((p) => p.data)).rejects.toMatchObject({ status: 404 });
  });
});
