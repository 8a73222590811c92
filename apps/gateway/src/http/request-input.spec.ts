import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../errors/api-error.js';
import { parseJsonBody } from './json-body.parser.js';
import { MAX_JSON_DEPTH } from '@drael/contracts';
import { checkRouteInput } from './request-input.js';

const parse = (text: string) => parseJsonBody(Buffer.from(text, 'utf8'));
const errorOf = (f: () => unknown): ApiError => {
  try {
    f();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a refusal');
};
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('the edge rules on JSON bodies', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses ${MAX_JSON_DEPTH + 1}, arrays and objects alike`, () => {
    expect(() => parse(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(errorOf(() => parse(nested(MAX_JSON_DEPTH + 1)))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(errorOf(() => parse(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`)).status).toBe(400);
    expect(errorOf(() => parse(nested(100_000))).message).toContain('64');
  });

  it('refuses a large body nested too deep from its bytes, before any parse (JSON.parse of the 32 MiB body limit in nested brackets held the loop 11 s)', () => {
    const parses = vi.spyOn(JSON, 'parse');
    try {
      const deep = `{"model":"m","messages":[],"x":${nested(500_000)}}`;
      expect(errorOf(() => parse(deep))).toMatchObject({ status: 400, code: 'invalid_request', message: expect.stringContaining('64') });
      expect(parses).not.toHaveBeenCalled();
      // A large body within the bound, strings holding brackets, is parsed as ever.
      const wide = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: '['.repeat(100_000) }], x: JSON.parse(nested(MAX_JSON_DEPTH - 1)) as unknown });
      expect(parse(wide)).toMatchObject({ model: 'm' });
    } finally {
      parses.mockRestore();
    }
  });

  it('refuses NUL and unpaired surrogates in strings and keys, naming the param', () => {
    expect(errorOf(() => parse('{"messages":[{"content":"a\\u0000"}]}'))).toMatchObject({ status: 400, param: 'messages[0].content' });
    expect(errorOf(() => parse('{"a":"\\ud800"}'))).toMatchObject({ param: 'a' });
    expect(errorOf(() => parse('{"a":"\\uDC00\\uD800"}'))).toMatchObject({ param: 'a' });
    expect(errorOf(() => parse('{"a":{"\\u0000":1}}'))).toMatchObject({ param: 'a' });
    expect(errorOf(() => parse('["\\u0000"]'))).toMatchObject({ param: '[0]' });
  });

  it('passes paired surrogates, escaped backslashes and raw U+FFFD', () => {
    expect(parse('{"a":"\\ud83d\\ude00"}')).toEqual({ a: '😀' });
    expect(parse('{"a":"\\\\u0000"}')).toEqual({ a: '\\u0000' });
    // U+FFFD itself, spelled in UTF-8, is a character like any other.
    expect(parseJsonBody(Buffer.from('"\uFFFD"'))).toBe('\uFFFD');
  });

  it('bytes that are not UTF-8 (raw surrogates, overlong forms, a cut sequence) are invalid_json, never decoded to U+FFFD', () => {
    for (const bytes of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82], [0xff]]) {
      const err = errorOf(() => parseJsonBody(Buffer.from([0x22, ...bytes, 0x22])));
      expect(err.code).toBe('invalid_json');
      expect(err.message).toMatch(/^[\x20-\x7e]*$/);
      expect(err.message).toContain('UTF-8');
    }
  });

  it('invalid JSON: invalid_json with only printable ASCII of the body echoed', () => {
    // Control characters and a NUL, all valid UTF-8: JSON.parse's message quotes them.
    const err = errorOf(() => parseJsonBody(Buffer.from([0x1f, 0x08, 0x00, 0x7b, 0x7f])));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toMatch(/^[\x20-\x7e]*$/);
  });
});

describe('the edge rules on path and query', () => {
  it('a NUL or lone surrogate in a path parameter is 404, in a query value or name 400', () => {
    expect(errorOf(() => checkRouteInput({ agent_id: 'a\0' }, {})).status).toBe(404);
    expect(errorOf(() => checkRouteInput({ '*': '\uD800' }, {})).status).toBe(404);
    expect(errorOf(() => checkRouteInput({}, { before: ['x', '\0'] }))).toMatchObject({ status: 400, param: 'before' });
    expect(errorOf(() => checkRouteInput({}, { '\0': 'x' }))).toMatchObject({ status: 400, param: null });
    expect(() => checkRouteInput({ id: '😀' }, { q: 'ok' })).not.toThrow();
  });
});
