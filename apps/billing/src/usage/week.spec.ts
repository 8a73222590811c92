import { describe, expect, it } from 'vitest';
import { utcDay, weekStart } from './week.js';

describe('weekly window', () => {
  it('starts on Monday 00:00 UTC', () => {
    expect(weekStart(new Date('2026-11-29T23:59:59.999Z')).toISOString()).toBe('2026-11-23T00:00:00.000Z'); // Sunday
    expect(weekStart(new Date('2026-11-30T00:00:00.000Z')).toISOString()).toBe('2026-11-30T00:00:00.000Z'); // Monday
    expect(weekStart(new Date('2026-12-02T12:00:00.000Z')).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(utcDay(new Date('2026-12-02T23:10:00.000Z')).toISOString()).toBe('2026-12-02T00:00:00.000Z');
  });
});
