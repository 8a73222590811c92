import { describe, expect, it } from 'vitest';
import { decide, leaseSize } from './rate-limiter.service.js';

const limits = { per_minute: 10, per_hour: 100 };

describe('decide (both windows counted in one Redis call)', () => {
  it('reports the window with the least left while both allow', () => {
    expect(decide([3, 50_000, 20, 3_000_000], limits)).toEqual({ allowed: true, limit: 10, remaining: 7, resetMs: 50_000, window: 'minute', retryAfterS: 50 });
    expect(decide([3, 50_000, 95, 3_000_000], limits)).toMatchObject({ allowed: true, limit: 100, remaining: 5, window: 'hour' });
    expect(decide([10, 50_000, 95, 3_000_000], limits)).toMatchObject({ allowed: true, limit: 10, remaining: 0, window: 'minute' });
  });

  it('refuses past either limit and reports the refusing window with the longest wait', () => {
    expect(decide([11, 12_300, 20, 3_000_000], limits)).toEqual({ allowed: false, limit: 10, remaining: 0, resetMs: 12_300, window: 'minute', retryAfterS: 13 });
    expect(decide([5, 12_300, 101, 3_000_000], limits)).toMatchObject({ allowed: false, limit: 100, remaining: 0, window: 'hour', retryAfterS: 3_000 });
    expect(decide([11, 12_300, 101, 3_000_000], limits)).toMatchObject({ allowed: false, window: 'hour', retryAfterS: 3_000 });
    expect(decide([11, 12_300, 101, 1_000], limits)).toMatchObject({ allowed: false, window: 'minute', retryAfterS: 13 });
  });
});

describe('leaseSize', () => {
  it('is the fraction of the smaller limit, at least one request', () => {
    expect(leaseSize({ per_minute: 1_000_000, per_hour: 10_000_000 }, 0.01)).toBe(10_000);
    expect(leaseSize({ per_minute: 600, per_hour: 300 }, 0.01)).toBe(3);
    expect(leaseSize({ per_minute: 60, per_hour: 1_000 }, 0.01)).toBe(1);
    expect(leaseSize({ per_minute: 1_000_000, per_hour: 10_000_000 }, 0)).toBe(1);
  });
});
