import { describe, expect, it } from 'vitest';
import { KeyIndex } from './key-index.js';

describe('KeyIndex', () => {
  it('says "maybe" for every key until it is ready, then "not there" for keys it has no live record of', () => {
    const index = new KeyIndex(10);
    index.record('a', 2_000);
    expect(index.mayHold('b', 1_000)).toBe(true);
    index.markReady();
    expect(index.mayHold('a', 1_000)).toBe(true);
    expect(index.mayHold('b', 1_000)).toBe(false);
    expect(index.mayHold('a', 2_000)).toBe(false); // expired
  });

  it('keeps the latest expiry of a key, and prunes only expired records', () => {
    const index = new KeyIndex(10);
    index.markReady();
    index.record('a', 5_000);
    index.record('a', 3_000);
    index.record('b', 1_500);
    index.prune(2_000);
    expect(index.size).toBe(1);
    expect(index.mayHold('a', 4_000)).toBe(true);
  });

  it('past its cap it stops recording and is not trusted until reset and rebuilt', () => {
    const index = new KeyIndex(2);
    index.markReady();
    index.record('a', 9_000);
    index.record('b', 9_000);
    expect(index.ready).toBe(true);
    index.record('c', 9_000);
    expect(index).toMatchObject({ ready: false, overflowed: true, size: 0 });
    expect(index.mayHold('z', 1_000)).toBe(true);
    index.markReady(); // a rebuild that overflowed does not make it trusted
    expect(index.ready).toBe(false);
    index.reset();
    index.record('a', 9_000);
    index.markReady();
    expect(index.mayHold('a', 1_000)).toBe(true);
    expect(index.mayHold('c', 1_000)).toBe(false);
  });
});
