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
  h = await startLoopHarness();
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
async function seenFor(send: () => Promise<Response>): Promise<{ response: Response; seen: Array<{ body: any }> }> {
  const before = h.upstream.requests.length;
  const response = await send();
  await response.arrayBuffer().catch(() => undefined);
  return { response, seen: h.upstream.requests.slice(before) };
}

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
});
