import { describe, expect, it } from 'vitest';
import { applyChunk, emptyStream, type StreamState } from './stream-state.js';

const chunk = (delta: object, finish: string | null = null) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
const frame = (drael: object) => chunk({ drael });
const feed = (datas: string[]): StreamState => datas.reduce(applyChunk, emptyStream());

describe('the playground stream state', () => {
  it('builds tool cards, sub-agent cards with their own tool calls, the turn count, text, finish and usage', () => {
    const s = feed([
      chunk({ role: 'assistant', content: '' }),
      frame({ event: 'turn_started', turn: 1 }),
      frame({ event: 'tool_started', id: 'rc', tool: 'run_code', arguments: '{"code":"1"}', turn: 1 }),
      frame({ event: 'subagent_started', id: 'sub_1', role: 'researcher', task: 't' }),
      frame({ event: 'turn_started', turn: 1, agent: 'sub_1' }),
      frame({ event: 'tool_started', id: 'w', tool: 'web_search', arguments: '{}', turn: 1, agent: 'sub_1' }),
      frame({ event: 'tool_done', id: 'w', tool: 'web_search', ok: false, duration_ms: 3, result: '{"ok":false}', agent: 'sub_1' }),
      frame({ event: 'tool_done', id: 'rc', tool: 'run_code', ok: true, duration_ms: 120, result: '{"ok":true}' }),
      frame({ event: 'subagent_done', id: 'sub_1', role: 'researcher', ok: true, preview: 'found' }),
      frame({ event: 'turn_started', turn: 2 }),
      chunk({ content: 'Done' }),
      chunk({ content: '.' }),
      chunk({}, 'stop'),
      JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
      '[DONE]',
    ]);
    expect(s.text).toBe('Done.');
    expect(s.turns).toBe(2);
    expect(s.finishReason).toBe('stop');
    expect(s.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(s.done).toBe(true);
    expect(s.cards.map((c) => c.kind)).toEqual(['tool', 'subagent']);
    expect(s.cards[0]).toMatchObject({ tool: 'run_code', status: 'done', ok: true, durationMs: 120, result: '{"ok":true}' });
    const sub = s.cards[1]!;
    expect(sub).toMatchObject({ kind: 'subagent', status: 'done', ok: true, preview: 'found', turns: 1 });
    expect(sub.kind === 'subagent' && sub.tools).toEqual([
      { id: 'w', tool: 'web_search', arguments: '{}', turn: 1, status: 'done', ok: false, durationMs: 3, result: '{"ok":false}' },
    ]);
  });

  it('ends on an error event with its envelope, and ignores what it cannot parse', () => {
    const s = feed(['not json', chunk({ content: 'a' }), JSON.stringify({ error: { message: 'upstream died', type: 'api_error', code: 'upstream_unreachable', param: null } })]);
    expect(s.text).toBe('a');
    expect(s.error).toEqual({ message: 'upstream died', code: 'upstream_unreachable', type: 'api_error' });
    expect(s.done).toBe(true);
  });
});
