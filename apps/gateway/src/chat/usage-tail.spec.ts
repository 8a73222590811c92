import { describe, expect, it } from 'vitest';
import { USAGE_TAIL_BYTES, usageFromTail } from './usage-tail.js';

const b = (s: string) => Buffer.from(s);
const chunk = (o: object) => `data: ${JSON.stringify(o)}\n\n`;

describe('usageFromTail: the usage of a proxied answer from its last bytes', () => {
  it("reads a non-streamed body's usage, details and fields after it included", () => {
    const body = JSON.stringify({
      id: 'x',
      choices: [{ index: 0, message: { role: 'assistant', content: 'the "usage": {"prompt_tokens": 99} is text here' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 34, total_tokens: 46, prompt_tokens_details: { cached_tokens: 2 }, completion_tokens_details: { reasoning_tokens: 0 } },
      system_fingerprint: 'fp_1',
    });
    expect(usageFromTail([b(body)])).toEqual({ prompt_tokens: 12, completion_tokens: 34 });
  });

  it("reads a stream's usage event, whole or split over the last chunks, past chunks that say usage null", () => {
    const events = [
      chunk({ choices: [{ delta: { content: 'hi' } }], usage: null }),
      chunk({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: null }),
      chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } }),
      'data: [DONE]\n\n',
    ].join('');
    expect(usageFromTail([b(events)])).toEqual({ prompt_tokens: 5, completion_tokens: 7 });
    const cut = events.indexOf('"completion_tokens"');
    expect(usageFromTail([b(events.slice(0, cut)), b(events.slice(cut, -14)), b(events.slice(-14))])).toEqual({ prompt_tokens: 5, completion_tokens: 7 });
  });

  it("reads an embeddings answer's usage, which has no completion tokens", () => {
    const body = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'e', usage: { prompt_tokens: 8, total_tokens: 8 } });
    expect(usageFromTail([b(body)])).toEqual({ prompt_tokens: 8, completion_tokens: 0 });
    expect(usageFromTail([b('{"usage":{"prompt_tokens":8,"completion_tokens":null}}')])).toBeUndefined();
  });

  it('counts nothing when there is no usage to read', () => {
    // A stream without include_usage: every chunk says null, or nothing at all.
    expect(usageFromTail([b(chunk({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: null })), b('data: [DONE]\n\n')])).toBeUndefined();
    expect(usageFromTail([b(chunk({ choices: [{ delta: {}, finish_reason: 'stop' }] }))])).toBeUndefined();
    // Counts that are not non-negative integers, a cut object, an error body, nothing.
    expect(usageFromTail([b('{"usage":{"prompt_tokens":-1,"completion_tokens":2}}')])).toBeUndefined();
    expect(usageFromTail([b('{"usage":{"prompt_tokens":"3","completion_tokens":2}}')])).toBeUndefined();
    expect(usageFromTail([b('{"usage":{"prompt_tokens":3,"completion_tokens":2')])).toBeUndefined();
    expect(usageFromTail([b('{"error":{"message":"no"}}')])).toBeUndefined();
    expect(usageFromTail([undefined, b('')])).toBeUndefined();
  });

  it('reads only the last USAGE_TAIL_BYTES: usage further up a long answer is not found', () => {
    const head = '{"usage":{"prompt_tokens":1,"completion_tokens":1},"choices":[{"message":{"content":"';
    const far = `${head}${'x'.repeat(USAGE_TAIL_BYTES)}"}}]}`;
    expect(usageFromTail([b(far)])).toBeUndefined();
    const near = `{"choices":[{"message":{"content":"${'x'.repeat(100_000)}"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`;
    expect(usageFromTail([b(near)])).toEqual({ prompt_tokens: 1, completion_tokens: 2 });
  });
});
