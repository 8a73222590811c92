/* eslint-disable @typescript-eslint/no-explicit-any -- stream frames are free-form JSON read by the assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStream, startLoopHarness, type LoopHarness } from './turn-loop.support.js';

// x-drael-tool-events: 1 (the console's playground) streams each turn and tool call as a
// `delta.drael` frame, sub-agents' included. No backend tool service answers on this prefix, so
// a tool the catalogue does not serve gives a failed result the frame must carry as the model saw it.
let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
}, 180_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

const ask = { messages: [{ role: 'user', content: 'go' }], stream: true, stream_options: { include_usage: true } };
const script = () =>
  h.script([
    {
      type: 'tool_calls',
      calls: [
        { id: 'c1', name: 'nope_tool', arguments: '{"x":1}' },
        { id: 's1', name: 'spawn_agent', arguments: JSON.stringify({ role: 'researcher', task: 'look' }) },
      ],
    },
    { type: 'tool_calls', calls: [{ id: 'k1', name: 'also_nope', arguments: '{}' }] },
    { type: 'text', content: 'child done' },
    { type: 'text', content: 'All done.' },
  ]);

describe('x-drael-tool-events', () => {
  it('streams turn_started, tool_started and tool_done frames (result as the model saw it), tagged with the sub-agent they belong to', async () => {
    script();
    const s = await readStream(await h.chat(ask, { 'x-drael-tool-events': '1' }));
    expect(s.content).toBe('All done.');
    const frames = s.frames;
    const parentTurns = frames.filter((f) => f.event === 'turn_started' && !f.agent).map((f) => f.turn);
    expect(parentTurns).toEqual([1, 2]);
    const started = frames.find((f) => f.event === 'tool_started' && f.id === 'c1');
    expect(started).toEqual({ event: 'tool_started', id: 'c1', tool: 'nope_tool', arguments: '{"x":1}', turn: 1 });
    const done = frames.find((f) => f.event === 'tool_done' && f.id === 'c1');
    expect(done).toMatchObject({ event: 'tool_done', id: 'c1', tool: 'nope_tool', ok: false });
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);
    // The very text the next turn's tool message carries.
    const toolMsg = h.upstream.requests.at(-1)!.body.messages.find((m: any) => m.tool_call_id === 'c1');
    expect(done.result).toBe(toolMsg.content);

    const sub = frames.find((f) => f.event === 'subagent_started');
    expect(sub).toMatchObject({ role: 'researcher', task: 'look' });
    const childTool = frames.find((f) => f.event === 'tool_done' && f.id === 'k1');
    expect(childTool).toMatchObject({ tool: 'also_nope', ok: false, agent: sub.id });
    expect(frames.some((f) => f.event === 'turn_started' && f.agent === sub.id)).toBe(true);
    expect(frames.find((f) => f.event === 'subagent_done')).toMatchObject({ id: sub.id, ok: true });
    // spawn_agent itself is shown by its sub-agent frames, not as a tool card.
    expect(frames.some((f) => f.event === 'tool_started' && f.tool === 'spawn_agent')).toBe(false);
  });

  it('without the header, only spec 04 sub-agent frames ride the stream', async () => {
    script();
    const s = await readStream(await h.chat(ask));
    expect(s.content).toBe('All done.');
    expect(new Set(s.frames.map((f) => f.event))).toEqual(new Set(['subagent_started', 'subagent_done']));
  });
});
