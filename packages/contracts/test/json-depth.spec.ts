import { describe, expect, it } from 'vitest';
import { closingQuoteOf, jsonTextNestedDeeperThan, MAX_JSON_DEPTH, nestedDeeperThan } from '../src/index.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nest = (levels: number, open = '[', close = ']') => `${open.repeat(levels)}1${close.repeat(levels)}`;

describe('jsonTextNestedDeeperThan: depth told from the bytes, before a parse', () => {
  it('says what nestedDeeperThan says of the parsed value, strings holding brackets, quotes and backslashes included', () => {
    const texts = [
      '1',
      '"a"',
      '[]',
      '{}',
      '{"a":[1,{"b":[]}]}',
      '{"[[[[":"]]]]{{{{","\\\\":"\\"[[[","x":["\\\\\\"{{{"]}',
      `{"a":${nest(3)},"b":"${'['.repeat(100)}"}`,
      `{"text":"a","extra":${nest(MAX_JSON_DEPTH - 1)}}`,
      `{"text":"a","extra":${nest(MAX_JSON_DEPTH)}}`,
      nest(MAX_JSON_DEPTH, '{"k":', '}'),
      nest(MAX_JSON_DEPTH + 1, '{"k":', '}'),
      '["é東京", {"\\u0022": ["\\\\"]}]',
    ];
    for (const text of texts) {
      const value: unknown = JSON.parse(text);
      for (const limit of [0, 1, 2, 3, 4, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1]) {
        expect(jsonTextNestedDeeperThan(bytes(text), limit), `${text.slice(0, 60)} at ${limit}`).toBe(nestedDeeperThan(value, limit));
      }
    }
  });

  it('tells a megabyte of nested brackets without parsing it, and reads a long string with a native search', () => {
    expect(jsonTextNestedDeeperThan(bytes(nest(500_000)), MAX_JSON_DEPTH)).toBe(true);
    const long = bytes(`{"data":"${'x'.repeat(1_000_000)}\\"${'['.repeat(1_000)}"}`);
    expect(jsonTextNestedDeeperThan(long, 1)).toBe(false);
  });

  it('closingQuoteOf skips escaped quotes, not a quote after an escaped backslash', () => {
    const text = bytes('"a\\"b\\\\" rest');
    expect(closingQuoteOf(text, 1)).toBe(7);
    expect(closingQuoteOf(bytes('"never closed'), 1)).toBe(-1);
  });
});
