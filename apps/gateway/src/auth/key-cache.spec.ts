import { describe, expect, it } from 'vitest';
import { KeyCache } from './key-cache.js';

describe('KeyCache', () => {
  it('forgets an entry after its ttl and keeps at most maxEntries', () => {
    let t = 0;
    const cache = new KeyCache<string>(1_000, 2, () => t);
    cache.set('a', 'A');
    expect(cache.get('a')).toBe('A');
    t = 999;
    expect(cache.get('a')).toBe('A');
    t = 1_000;
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('c', 'C');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe('B');
    expect(cache.get('c')).toBe('C');
  });

  it('caches nothing with a ttl of 0', () => {
    const cache = new KeyCache<string>(0, 10);
    cache.set('a', 'A');
    expect(cache.get('a')).toBeUndefined();
  });
});
