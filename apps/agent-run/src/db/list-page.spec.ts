import { describe, expect, it } from 'vitest';
import { pageOf } from './list-page.js';

const page = (p: { limit: number; before?: string }) => ({ order: 'desc' as const, ...p });
// Rows as the query returns them (scan order, one extra), each 10 bytes of JSON ("xxxxxxxx" is 10 with its quotes).
const rows = ['a', 'b', 'c', 'd', 'e'].map((c) => c.repeat(8));
const id = (r: string) => r;

describe('pageOf: at most limit items, and no more than fit in one reply', () => {
  it('keeps the whole page when it fits; has_more from the extra row', () => {
    expect(pageOf(rows, page({ limit: 4 }), id, 1_000)).toEqual({ items: rows.slice(0, 4), hasMore: true });
    expect(pageOf(rows.slice(0, 3), page({ limit: 4 }), id, 1_000)).toEqual({ items: rows.slice(0, 3), hasMore: false });
  });

  it('cuts a page that does not fit and says has_more, even when no row lies past limit', () => {
    // 11 bytes an item (its JSON and a comma): 3 fit in 33.
    expect(pageOf(rows.slice(0, 4), page({ limit: 4 }), id, 33)).toEqual({ items: rows.slice(0, 3), hasMore: true });
  });

  it('paging backwards keeps the items nearest the cursor, in the list order', () => {
    // `before`: scan order is away from the cursor; the page shows them reversed.
    expect(pageOf(rows.slice(0, 4), page({ limit: 4, before: 'z' }), id, 22)).toEqual({ items: [rows[1], rows[0]], hasMore: true });
  });

  it('always keeps the first item, so paging never stalls', () => {
    expect(pageOf(rows, page({ limit: 4 }), id, 1)).toEqual({ items: [rows[0]], hasMore: true });
  });
});
