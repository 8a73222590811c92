import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FIELD_BYTES } from '../src/tools/tool-result.js';
import { startPages, startStack, type Stack } from './responses.support.js';
import { toolMessages } from './turn-loop.support.js';

// The chat catalogue's web_fetch against the REAL fetch service: a page longer than the tool
// result's 8 KiB field is read a window at a time. The model sees where the window stands in the
// page and how to read on; the next call with that offset starts where the last one stopped.
let stack: Stack;
let pages: Awaited<ReturnType<typeof startPages>>;

const sentence = (i: number) => `Sentence ${i} of the handbook says that the value ${i} is worth remembering.`;
const longArticle = `<html><head><title>Handbook</title></head><body><article><h1>Handbook</h1>${Array.from(
  { length: 60 },
  (_, p) => `<p>${Array.from({ length: 5 }, (_, s) => sentence(p * 5 + s)).join(' ')}</p>`,
).join('')}</article></body></html>`;
const japanese = `<html lang="ja"><head><title>案内</title></head><body><article><h1>案内</h1>${Array.from(
  { length: 80 },
  (_, p) => `<p>${'これは長い日本語の段落です。'.repeat(6)}第${p}段落。</p>`,
).join('')}</article></body></html>`;

beforeAll(async () => {
  pages = await startPages({ '/handbook': { body: longArticle }, '/ja': { body: japanese } });
  stack = await startStack();
}, 240_000);

afterAll(async () => {
  await stack?.close();
  await pages?.close();
});

/** One chat request whose model calls web_fetch with `args`, then answers; the tool result it was given. */
async function webFetch(args: Record<string, unknown>): Promise<{ ok: boolean; content: string; truncated?: boolean; next_offset?: number }> {
  stack.upstream.setTurns([
    { type: 'tool_calls', calls: [{ id: 'f1', name: 'web_fetch', arguments: JSON.stringify(args) }] },
    { type: 'text', content: 'read' },
  ]);
  const before = stack.upstream.requests.length;
  const r = await fetch(`${stack.gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...stack.auth },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Read it.' }] }),
  });
  expect(r.status).toBe(200);
  await r.json();
  const [result] = toolMessages(stack.upstream.requests[before + 1]!.body);
  return result!.content as never;
}

describe('web_fetch reads a long page a window at a time', () => {
  it('each window fits the 8 KiB field, ends on a whole sentence, says where it stands and how to read on; the next starts where it stopped', async () => {
    const url = `${pages.url}/handbook`;
    const first = await webFetch({ url });
    expect(first).toMatchObject({ ok: true, truncated: true });
    expect(Buffer.byteLength(first.content)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    const note = /\n\[cut: characters 0-(\d+) of (\d+) are shown; call web_fetch again with offset=(\d+) to read on, or with focus to get the passages about a topic\]$/.exec(
      first.content,
    );
    expect(note, first.content.slice(-300)).not.toBeNull();
    const [, shownTo, total, offset] = note!.map(Number);
    expect(offset).toBe(first.next_offset);
    expect(total).toBeGreaterThan(20_000);
    expect(shownTo).toBeLessThanOrEqual(offset!);
    const text = first.content.slice(0, note!.index);
    // A whole sentence last, never a half word (the field's byte cut used to stop mid-word).
    expect(text).toMatch(/is worth remembering\.$/);
    const lastShown = Number(/Sentence (\d+) of the handbook says that the value \d+ is worth remembering\.$/.exec(text)![1]);

    const second = await webFetch({ url, offset });
    expect(second.content.startsWith(sentence(lastShown + 1))).toBe(true);
    expect(second.content).toMatch(new RegExp(`\\n\\[cut: characters ${offset}-\\d+ of ${total} are shown; call web_fetch again with offset=\\d+`));

    const past = await webFetch({ url, offset: total! + 5 });
    expect(past.ok).toBe(true);
    expect(past.content).toBe(`\n[the page has ${total} characters: offset=${total! + 5} is past its end]`);
  });

  it('a page of three UTF-8 bytes a character is asked again for fewer characters: the window still fits 8 KiB, whole characters, with the note', async () => {
    const first = await webFetch({ url: `${pages.url}/ja` });
    expect(first).toMatchObject({ ok: true, truncated: true });
    expect(Buffer.byteLength(first.content)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(first.content).not.toContain('\uFFFD');
    expect(first.content).toMatch(/\n\[cut: characters 0-\d+ of \d+ are shown; call web_fetch again with offset=\d+/);
    // The service's own cut came first: the field's byte cut (with its own note) never applied.
    expect(first.content).not.toContain('bytes are shown');
  });

  it('an offset that is not a whole number of characters from zero is a typed failure the model reads', async () => {
    const bad = await webFetch({ url: `${pages.url}/handbook`, offset: -1 });
    expect(bad).toMatchObject({ ok: false });
  });
});
