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

  it('keeps an entry for a shorter time when asked, never longer than its TTL, and not at all for 0 or less', () => {
    let t = 0;
    const cache = new KeyCache<string>(1_000, 10, () => t);
    cache.set('short', 'S', 300);
    cache.set('long', 'L', 5_000);
    cache.set('gone', 'G', 0);
    cache.set('past', 'P', -5);
    expect(cache.get('gone')).toBeUndefined();
    expect(cache.get('past')).toBeUndefined();
    t = 299;
    expect(cache.get('short')).toBe('S');
    t = 300;
    expect(cache.get('short')).toBeUndefined();
    t = 999;
    expect(cache.get('long')).toBe('L');
    t = 1_000;
    expect(cache.get('long')).toBeUndefined();
  });
});
