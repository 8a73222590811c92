import { describe, expect, it } from 'vitest';
import { normaliseQuery } from './search-cache.js';

describe('normaliseQuery (one cache key per search however it is typed)', () => {
  it.each([
    ['  Curs  BNR ', 'curs bnr'],
    ['tabs\tand\nlines', 'tabs and lines'],
    // NFKC for anything beyond ASCII: ligatures, full-width letters, a no-break space.
    ['ﬁle ＡＢＣ', 'file abc'],
    ['curs\u00a0bnr', 'curs bnr'],
    ['Cafe\u0301', 'café'],
    ['ÉTÉ', 'été'],
  ])('%j → %j', (query, key) => {
    expect(normaliseQuery(query)).toBe(key);
  });

  it('gives ASCII what NFKC would', () => {
    let all = '';
    for (let c = 0; c < 128; c++) all += String.fromCharCode(c);
    expect(normaliseQuery(all)).toBe(all.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase());
  });
});
