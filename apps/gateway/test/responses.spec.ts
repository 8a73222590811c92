import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, startStack, FIXTURE_URL, type Stack } from './responses.support.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

const SEARCH = 'search.query.v1';

describe('POST /v1/responses: a plain answer', () => {
  it('non-streamed: one message item, usage, output_text', async () => {
    stack.upstream.setTurns([{ type: 'text', content: ['Hello', ' there'], usage: { prompt_tokens: 7, completion_tokens: 2 } }]);
    const r = await stack.post({ model: 'gpt-test', input: 'hi' });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(body.object).toBe('response');
    expect(body.status).toBe('completed');
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello there' }] });
    expect(body.output_text).toBe('Hello there');
    expect(body.usage).toMatchObject({ input_tokens: 7, output_tokens: 2, total_tokens: 9 });
    const sent = stack.upstream.requests.at(-1)!.body;
    expect(sent.model).toBe('upstream-model');
    expect(sent.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });
});

describe('hosted web_search', () => {
  it('streams the search as an item, then continues the same stream to one terminal', async () => {
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'c1', name: 'web_search', arguments: '{"query":"drael gateway architecture"}' }] },
      { type: 'text', content: ['Drael routes requests ', `(see ${FIXTURE_URL}/pages/drael-architecture).`] },
    ]);
    const r = await stack.post({ model: 'gpt-test', input: 'What is Drael?', tools: [{ type: 'web_search' }], stream: true });
    expect(r.status).toBe(200);
    const events = await eventsOf(r);
    console.log(events.map((e) => e.type));
    expect(events.at(-1)!.type).toBe('response.completed');
  });
});
