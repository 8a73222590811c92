import { describe, expect, it } from 'vitest';
import { MAX_CODE_BYTES } from '@drael/contracts';
import { assertCodeSize, resolveTimeoutS } from './run-limits.js';

describe('run limits', () => {
  it('accepts 256 KiB of source and refuses one byte more, counted in UTF-8', () => {
    expect(() => assertCodeSize('x'.repeat(MAX_CODE_BYTES))).not.toThrow();
    expect(() => assertCodeSize('x'.repeat(MAX_CODE_BYTES + 1))).toThrow(expect.objectContaining({ code: 'code_too_large' }));
    // 2-byte characters: half as many fit.
    expect(() => assertCodeSize('é'.repeat(MAX_CODE_BYTES / 2 + 1))).toThrow(expect.objectContaining({ code: 'code_too_large' }));
  });

  it('defaults the timeout to 30 s, allows up to 300 s, refuses 0, negatives, NaN, infinity and more than 300', () => {
    expect(resolveTimeoutS(undefined)).toBe(30);
    expect(resolveTimeoutS(0.5)).toBe(0.5);
    expect(resolveTimeoutS(300)).toBe(300);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 300.001]) {
      expect(() => resolveTimeoutS(bad)).toThrow(expect.objectContaining({ code: 'invalid_timeout' }));
    }
  });
});
