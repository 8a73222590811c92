import { describe, expect, it } from 'vitest';
import { withOutputLimitAs } from './output-limit.js';

describe('the output limit under a deployment’s name', () => {
  it('moves a limit given under the other name, and keeps the deployment’s own when both are given', () => {
    expect(withOutputLimitAs({ a: 1, max_tokens: 5 }, 'max_completion_tokens')).toEqual({ a: 1, max_completion_tokens: 5 });
    expect(withOutputLimitAs({ max_completion_tokens: 7 }, 'max_tokens')).toEqual({ max_tokens: 7 });
    expect(withOutputLimitAs({ max_tokens: 5, max_completion_tokens: 9 }, 'max_completion_tokens')).toEqual({ max_completion_tokens: 9 });
    expect(withOutputLimitAs({ max_tokens: null }, 'max_completion_tokens')).toEqual({});
  });

  it('leaves the body as it is (the same object) without the setting or without a limit to move', () => {
    const fields = { max_tokens: 5 };
    expect(withOutputLimitAs(fields, undefined)).toBe(fields);
    expect(withOutputLimitAs(fields, 'max_tokens')).toBe(fields);
    const unlimited = { temperature: 0 };
    expect(withOutputLimitAs(unlimited, 'max_completion_tokens')).toBe(unlimited);
  });
});
