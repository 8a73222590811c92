import { z } from 'zod';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, ListOrderSchema, pageOf, UnknownCursorError, type ListPage, type ListPageQuery } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import { validateBody } from './validate.js';

/** A list route's query string as OpenAI's lists take it (packages/contracts list-page.ts). */
export const ListQuerySchema = z.looseObject({
  after: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT),
  order: ListOrderSchema.default('desc'),
});

/** Parses `after`, `limit` and `order`; a bad one is a 400 naming it. Other parameters are left to the route. */
export function listQueryOf(query: unknown): ListPageQuery {
  const q = validateBody(ListQuerySchema, query ?? {});
  return { ...(q.after !== undefined ? { after: q.after } : {}), limit: q.limit, order: q.order };
}

/** One page of items already in ascending (creation time, id) order; an unknown `after` is a 400 naming it. */
export function listPageOf<T>(items: readonly T[], query: ListPageQuery, idOf: (item: T) => string): ListPage<T> {
  try {
    return pageOf(items, query, idOf);
  } catch (err) {
    if (err instanceof UnknownCursorError) throw new ApiError('invalid_request', err.message, 'after');
    throw err;
  }
}
