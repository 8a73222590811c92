import { describe, expect, it } from 'vitest';
import type { InferenceMessage } from '@drael/contracts';
import { conversationSoFar, MODEL_CALL_KIND, type ModelToolCall } from './conversation.js';

const opening: InferenceMessage[] = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'task' },
];
const call = (id: string): ModelToolCall => ({ id, type: 'function', function: { name: 'sandbox_execute', arguments: '{}' } });
const reply = (...calls: ModelToolCall[]) => ({ kind: MODEL_CALL_KIND, message: { role: 'assistant' as const, content: null, tool_calls: calls } });
const answer = (id: string) => ({ kind: 'sandbox.execute', message: { role: 'tool' as const, tool_call_id: id, content: `out ${id}` } });

describe('conversationSoFar (a resumed run rebuilds its conversation from its written steps)', () => {
  it('goes on with the model call when every call of its last reply was answered', () => {
    const steps = [reply(call('a')), answer('a')];
    expect(conversationSoFar(opening, steps)).toEqual({ messages: [...opening, steps[0]!.message, steps[1]!.message], pendingCalls: [] });
  });

  it('goes on with the calls of the last reply not yet answered, in order', () => {
    const steps = [reply(call('a'), call('b'), call('c')), answer('a')];
    const soFar = conversationSoFar(opening, steps);
    expect(soFar).toMatchObject({ pendingCalls: [call('b'), call('c')] });
    expect('messages' in soFar && soFar.messages).toHaveLength(4);
  });

  it('counts answers, not ids: a model that repeats or omits call ids still resumes at the right call', () => {
    expect(conversationSoFar(opening, [reply(call(''), call('')), answer('')])).toMatchObject({ pendingCalls: [call('')] });
  });

  it('answers at once when the model had answered before the worker stopped', () => {
    const final = { kind: MODEL_CALL_KIND, message: { role: 'assistant' as const, content: 'done' } };
    expect(conversationSoFar(opening, [reply(call('a')), answer('a'), final])).toEqual({ answer: 'done' });
  });

  it('refuses to rebuild what it cannot: a step without its message, an answer not last, a tool step after every call', () => {
    expect(conversationSoFar(opening, [reply(call('a')), { kind: 'sandbox.execute', message: null }])).toEqual({ notResumable: 'step 1 was written without its message' });
    const final = { kind: MODEL_CALL_KIND, message: { role: 'assistant' as const, content: 'done' } };
    expect(conversationSoFar(opening, [final, answer('a')])).toEqual({ notResumable: 'step 0 answered, yet steps follow it' });
    expect(conversationSoFar(opening, [reply(call('a')), answer('a'), answer('a')])).toEqual({ notResumable: 'step 2 answers no tool call' });
  });

  it('never changes the opening it is given', () => {
    const before = structuredClone(opening);
    conversationSoFar(opening, [reply(call('a'))]);
    expect(opening).toEqual(before);
  });
});
