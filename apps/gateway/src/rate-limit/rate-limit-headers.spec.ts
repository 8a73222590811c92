import { describe, expect, it } from 'vitest';
import { openAiDuration } from './rate-limit-headers.js';

describe('openAiDuration', () => {
  it('formats like OpenAI reset headers', () => {
    expect(openAiDuration(1)).toBe('1s');
    expect(openAiDuration(59_001)).toBe('1m0s');
    expect(openAiDuration(360_000)).toBe('6m0s');
    expect(openAiDuration(3_723_000)).toBe('1h2m3s');
  });
});
