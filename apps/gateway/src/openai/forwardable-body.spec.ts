import { describe, expect, it } from 'vitest';
import { forwardedBody, hasPlainDistinctTopLevelKeys } from './forwardable-body.js';

const plain = (text: string) => hasPlainDistinctTopLevelKeys(Buffer.from(text), Object.keys(JSON.parse(text) as object).length);

describe('hasPlainDistinctTopLevelKeys', () => {
  it('a body as clients write it, pretty or not, nested keys and escapes in values included, is plain', () => {
    expect(plain('{"model":"m","messages":[{"role":"user","content":"say \\"model\\": \\\\"}],"tools":[{"type":"function"}]}')).toBe(true);
    expect(plain('{\n  "model" : "m",\n  "stream": true,\n  "x": {"model": "nested", "model": "dup inside is not top level"}\n}')).toBe(true);
    expect(plain('{"a":"\\u00e9","b":[1,{"c":"}"}],"d":"{\\"e\\":1}"}')).toBe(true);
  });

  it('a duplicate or escaped top-level key is not', () => {
    expect(plain('{"model":"a","messages":[],"model":"b"}')).toBe(false);
    expect(plain('{"model":"a","mod\\u0065l":"b"}')).toBe(false);
    expect(plain('{"str\\u0065am":true}')).toBe(false);
    expect(plain('{"a\\"b":1}')).toBe(false);
    // An escape in a later key, past values that hold escapes: still seen.
    expect(plain('{"a":"\\\\","b":"x\\"y","c\\u0064":1}')).toBe(false);
  });

  it('reads a body of many keys in one pass: the bytes searched stay a small multiple of the body (the attack: every key searched to the end)', () => {
    // 64 KiB of short top-level keys and no backslash. Searched from each key to the end for an
    // escape, 1 MiB of them took 660 ms on the event loop, and the 32 MiB body limit allows minutes.
    const text = `{${Array.from({ length: 6_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    const raw = Buffer.from(text);
    let searched = 0;
    const indexOf = raw.indexOf.bind(raw);
    raw.indexOf = ((value: number, from: number) => {
      const at = indexOf(value, from);
      searched += (at === -1 ? raw.length : at + 1) - from;
      return at;
    }) as typeof raw.indexOf;
    expect(hasPlainDistinctTopLevelKeys(raw, 6_000)).toBe(true);
    expect(searched).toBeLessThan(raw.length * 3);
  });
});

describe('forwardedBody', () => {
  it('the raw bytes when plain and unchanged; the parsed body re-encoded otherwise', () => {
    const rawText = '{"model":"a","model":"b","n":1}';
    const parsed = JSON.parse(rawText) as Record<string, unknown>;
    expect(forwardedBody(parsed, Buffer.from(rawText))(undefined)).toBe('{"model":"b","n":1}');
    const clean = Buffer.from('{"model":"b", "n":1}');
    expect(forwardedBody(parsed, clean)(undefined)).toBe(clean);
    expect(forwardedBody(parsed, clean)({ model: 'up' })).toBe('{"model":"up","n":1}');
  });
});
