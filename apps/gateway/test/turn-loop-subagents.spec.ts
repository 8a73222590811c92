/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_MAX_TOKENS } from '../src/tools/spawn-agent.tool.js';
import { readStream, startLoopHarness, toolMessages, toolNames, type LoopHarness } from './turn-loop.support.js';

// spawn_agent against a scripted upstream: children are further requests to the same upstream,
// told apart by their system brief. No backend tool service answers on this prefix.
let h: LoopHarness;
const ask = [{ role: 'user', content: 'Research two things.' }];
const spawn = (id: string, role: string, task: string) => ({ id, name: 'spawn_agent', arguments: JSON.stringify({ role, task }) });
const isChild = (body: any) => body.messages[0]?.role === 'system' && /sub-agent/.test(body.messages[0].content);

beforeAll(async () => {
  h = await startLoopHarness({
    models: {
      'gpt-test': { base_url: '', model: 'upstream-model', input_per_1m: 1, output_per_1m: 2 },
      // 100 000 USD per 1M prompt tokens: 10 cents a token, so 60 prompt tokens cross the 5 USD ceiling.
      pricey: { base_url: '', model: 'upstream-model', input_per_1m: 100_000, output_per_1m: 0 },
    },
    // Eight tool calls a request (the default is 128): no other test here makes more than five.
    env: { DRAEL_REQUEST_TOOL_CALLS: '8' },
  });
}, 180_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

describe('spawn_agent', () => {
  it('runs children concurrently on the parent alias with max_tokens 4096 and without spawn_agent; results come back prefixed and in order', async () => {
    h.script([
      { type: 'tool_calls', calls: [spawn('s1', 'researcher', 'find A'), spawn('s2', 'researcher', 'find B')] },
      { type: 'text', content: 'child answer one' },
      { type: 'text', content: 'child answer two' },
      { type: 'text', content: 'Both done.' },
    ]);
    const before = h.upstream.requests.length;
    const body = (await (await h.chat({ messages: ask, max_tokens: 100 })).json()) as any;
    expect(body.error).toBeUndefined();
    expect(body.choices[0].message.content).toBe('Both done.');
    const seen = h.upstream.requests.slice(before);
    expect(seen).toHaveLength(4);
    const children = seen.filter((r) => isChild(r.body));
    expect(children).toHaveLength(2);
    for (const c of children) {
      expect(c.body.model).toBe('upstream-model');
      expect(c.body.max_tokens).toBe(CHILD_MAX_TOKENS);
      expect(toolNames(c.body)).not.toContain('spawn_agent');
      expect(c.body.messages[1].role).toBe('user');
    }
    expect(children.map((c) => c.body.messages[1].content).sort()).toEqual(['find A', 'find B']);
    const results = toolMessages(seen[3]!.body);
    expect(results.map((r) => r.tool_call_id)).toEqual(['s1', 's2']);
    for (const r of results) expect(r.content).toMatch(/^SUB-AGENT\[researcher\] RESULT: child answer (one|two)$/);
    // Usage counts the children too: 4 model calls of 10 + 5 tokens (the script's default).
    expect(body.usage).toEqual({ prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 });
  });

  it('caps the fan-out at 4 per turn: the fifth call gets delegation_fanout_capped', async () => {
    h.script([
      { type: 'tool_calls', calls: [1, 2, 3, 4, 5].map((i) => spawn(`f${i}`, 'researcher', `task ${i}`)) },
      { type: 'text', content: 'c' },
      { type: 'text', content: 'c' },
      { type: 'text', content: 'c' },
      { type: 'text', content: 'c' },
      { type: 'text', content: 'final' },
    ]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask })).json();
    const seen = h.upstream.requests.slice(before);
    expect(seen.filter((r) => isChild(r.body))).toHaveLength(4);
    const results = toolMessages(seen.at(-1)!.body);
    expect(results.map((r) => r.tool_call_id)).toEqual(['f1', 'f2', 'f3', 'f4', 'f5']);
    expect(results[4]!.content).toEqual({ error: 'delegation_fanout_capped' });
    expect(results.slice(0, 4).every((r) => String(r.content).startsWith('SUB-AGENT[researcher] RESULT:'))).toBe(true);
  });

  it('a request runs at most DRAEL_REQUEST_TOOL_CALLS tool calls, its children included: the rest are answered tool_call_limit_reached, not run', async () => {
    const fourSpawns = (round: number) => ({ type: 'tool_calls' as const, calls: [1, 2, 3, 4].map((i) => spawn(`r${round}-${i}`, 'researcher', `task ${round}.${i}`)) });
    const child = { type: 'text' as const, content: 'c' };
    h.script([fourSpawns(1), child, child, child, child, fourSpawns(2), child, child, child, child, fourSpawns(3), { type: 'text', content: 'final' }]);
    const before = h.upstream.requests.length;
    const body = (await (await h.chat({ messages: ask })).json()) as any;
    expect(body.choices[0].message.content).toBe('final');
    const seen = h.upstream.requests.slice(before);
    // Eight children ran (two rounds of four); the third round's four were never started.
    expect(seen.filter((r) => isChild(r.body))).toHaveLength(8);
    const third = toolMessages(seen.at(-1)!.body).filter((r) => String(r.tool_call_id).startsWith('r3-'));
    expect(third).toHaveLength(4);
    for (const r of third) expect(r.content).toMatchObject({ ok: false, error: 'tool_call_limit_reached' });
  });

  it('children never spawn: a forged spawn_agent call in a child is refused', async () => {
    h.script([
      { type: 'tool_calls', calls: [spawn('p1', 'researcher', 'go deep')] },
      { type: 'tool_calls', calls: [spawn('g1', 'researcher', 'grandchild')] },
      { type: 'text', content: 'child did it alone' },
      { type: 'text', content: 'ok' },
    ]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask })).json();
    const seen = h.upstream.requests.slice(before);
    // parent, child turn 1, child turn 2, parent turn 2: no grandchild request.
    expect(seen).toHaveLength(4);
    expect(isChild(seen[2]!.body)).toBe(true);
    const [refused] = toolMessages(seen[2]!.body);
    expect(refused).toMatchObject({ tool_call_id: 'g1', content: { error: 'spawn_refused' } });
    expect(toolMessages(seen[3]!.body)[0]!.content).toBe('SUB-AGENT[researcher] RESULT: child did it alone');
  });

  it('invalid arguments and a failing child answer as the spec says', async () => {
    h.script([
      { type: 'tool_calls', calls: [{ id: 'bad', name: 'spawn_agent', arguments: '{"role":"wizard","task":"x"}' }, spawn('dies', 'researcher', 'fail please')] },
      { type: 'error', status: 500, message: 'child upstream broke' },
      { type: 'text', content: 'reported' },
    ]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask })).json();
    const results = toolMessages(h.upstream.requests.at(-1)!.body);
    expect(h.upstream.requests.length - before).toBe(3);
    expect(results).toEqual([
      { tool_call_id: 'bad', content: { error: 'invalid_arguments' } },
      { tool_call_id: 'dies', content: { error: 'sub_agent_failed' } },
    ]);
  });

  it('child spend counts toward the request cost ceiling: once reached, further spawns return request_cost_ceiling', async () => {
    h.script([
      { type: 'tool_calls', calls: [spawn('c1', 'researcher', 'expensive')], usage: { prompt_tokens: 1, completion_tokens: 1 } },
      { type: 'text', content: 'costly answer', usage: { prompt_tokens: 60, completion_tokens: 1 } },
      { type: 'tool_calls', calls: [spawn('c2', 'researcher', 'more')], usage: { prompt_tokens: 1, completion_tokens: 1 } },
      { type: 'text', content: 'stopped' },
    ]);
    const before = h.upstream.requests.length;
    await (await h.chat({ model: 'pricey', messages: ask })).json();
    const seen = h.upstream.requests.slice(before);
    expect(seen).toHaveLength(4);
    expect(seen.filter((r) => isChild(r.body))).toHaveLength(1);
    expect(toolMessages(seen[3]!.body)[1]!.content).toEqual({ error: 'request_cost_ceiling' });
  });
});

describe('progress frames and the official openai SDK', () => {
  const script = () =>
    h.script([
      { type: 'tool_calls', content: 'Delegating. ', calls: [spawn('v1', 'researcher', 'look it up')] },
      { type: 'text', content: 'the child found it' },
      { type: 'text', content: ['All ', 'done.'] },
    ]);

  it('a streamed request carries subagent_started and subagent_done inside the delta', async () => {
    script();
    const s = await readStream(await h.chat({ messages: ask, stream: true }));
    expect(s.frames).toHaveLength(2);
    expect(s.frames[0]).toMatchObject({ event: 'subagent_started', role: 'researcher', task: 'look it up' });
    expect(s.frames[1]).toMatchObject({ event: 'subagent_done', id: s.frames[0].id, role: 'researcher', ok: true, preview: 'the child found it' });
    expect(s.content).toBe('Delegating. \n\nAll done.');
    expect(s.finishReasons).toEqual(['stop']);
  });

  it('the SDK renders a streamed catalogue-mode answer with sub-agent frames as one assistant message', async () => {
    script();
    const client = new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey: h.apiKey });
    const stream = client.chat.completions.stream({ model: 'gpt-test', messages: ask as any, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    expect(final.choices).toHaveLength(1);
    expect(final.choices[0]!.message.role).toBe('assistant');
    expect(final.choices[0]!.message.content).toBe('Delegating. \n\nAll done.');
    expect(final.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.usage?.total_tokens).toBe(45);
  });

  it('the SDK iterates a plain streamed answer (no frames) chunk by chunk', async () => {
    h.script([
      { type: 'tool_calls', content: 'Checking. ', calls: [{ name: 'web_search', arguments: '{"query":"x"}' }] },
      { type: 'text', content: 'Answer.' },
    ]);
    const client = new OpenAI({ baseURL: `${h.gateway.url}/v1`, apiKey: h.apiKey });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: ask as any, stream: true });
    let text = '';
    const finishes: string[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    expect(text).toBe('Checking. \n\nAnswer.');
    expect(finishes).toEqual(['stop']);
  });
});
