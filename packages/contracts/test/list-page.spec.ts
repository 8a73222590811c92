import { describe, expect, it } from 'vitest';
import { byCreation, ListPageQuerySchema, pageOf, UnknownCursorError } from '../src/list-page.js';

interface Item {
  id: string;
  at: number;
}
const items: Item[] = [
  { id: 'b', at: 2 },
  { id: 'a', at: 2 },
  { id: 'z', at: 1 },
  { id: 'c', at: 3 },
].sort(
  byCreation(
    (i) => i.at,
    (i) => i.id,
  ),
);
const q = (page: object = {}) => ListPageQuerySchema.parse(page);
const ids = (page: { data: Item[] }) => page.data.map((i) => i.id);

describe('pageOf (OpenAI list pagination)', () => {
  it('orders by creation time then id, newest first by default', () => {
    expect(items.map((i) => i.id)).toEqual(['z', 'a', 'b', 'c']);
    expect(pageOf(items, q(), (i) => i.id)).toEqual({ object: 'list', data: [...items].reverse(), first_id: 'c', last_id: 'z', has_more: false });
  });

  it('walks every item exactly once with after / limit, in both orders', () => {
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = pageOf(items, q({ limit: 1, order, ...(after ? { after } : {}) }), (i) => i.id);
        seen.push(...ids(page));
        if (!page.has_more) break;
        after = page.last_id!;
      }
      expect(seen).toEqual(order === 'asc' ? ['z', 'a', 'b', 'c'] : ['c', 'b', 'a', 'z']);
    }
  });

  it('an empty list or page has null ids; an unknown cursor is an error, not an empty page', () => {
    expect(pageOf([], q(), (i: Item) => i.id)).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(pageOf(items, q({ after: 'z' }), (i) => i.id)).toMatchObject({ data: [], has_more: false });
    expect(() => pageOf(items, q({ after: 'nope' }), (i) => i.id)).toThrow(UnknownCursorError);
  });

  it('limit is 1-100, 20 by default', () => {
    expect(q().limit).toBe(20);
    expect(ListPageQuerySchema.safeParse({ limit: 0 }).success).toBe(false);
    expect(ListPageQuerySchema.safeParse({ limit: 101 }).success).toBe(false);
    expect(ListPageQuerySchema.safeParse({ order: 'up' }).success).toBe(false);
  });
});
