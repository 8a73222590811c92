import { z } from 'zod';

/**
 * Lists paginate as OpenAI's do: `limit` (1-100, default 20), `order` (`desc` by default: newest
 * first), `after` (the id of the last item of the previous page); the page says `has_more` and
 * names its `first_id` and `last_id`. Items are ordered by creation time, then id, so the order is
 * stable even for items created in the same millisecond.
 */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

export const ListOrderSchema = z.enum(['asc', 'desc']);
export type ListOrder = z.infer<typeof ListOrderSchema>;

export const ListPageQueryShape = {
  after: z.string().min(1).max(200).optional(),
  limit: z.number().int().min(1).max(LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT),
  order: ListOrderSchema.default('desc'),
};
export const ListPageQuerySchema = z.object(ListPageQueryShape);
export type ListPageQuery = z.output<typeof ListPageQuerySchema>;

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** Why a page cannot be cut: `after` names no item of the list. */
export class UnknownCursorError extends Error {
  constructor(readonly after: string) {
    super(`No item with id '${after}' in this list to list after`);
    this.name = 'UnknownCursorError';
  }
}

/**
 * One page of `items`, which must already be in ascending (creation time, id) order. Throws
 * UnknownCursorError when `after` names no item (Stripe and OpenAI answer that with a 4xx rather
 * than an empty page, which a client would take for the end of the list).
 */
export function pageOf<T>(items: readonly T[], query: ListPageQuery, idOf: (item: T) => string): ListPage<T> {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => idOf(item) === query.after);
    if (at === -1) throw new UnknownCursorError(query.after);
    start = at + 1;
  }
  const data = ordered.slice(start, start + query.limit);
  return {
    object: 'list',
    data,
    first_id: data.length > 0 ? idOf(data[0]!) : null,
    last_id: data.length > 0 ? idOf(data[data.length - 1]!) : null,
    has_more: start + data.length < ordered.length,
  };
}

/** Ascending (creation time, id): the one order every list is cut from. */
export function byCreation<T>(createdAtOf: (item: T) => number, idOf: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => createdAtOf(a) - createdAtOf(b) || (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0);
}
