import type { CursorPage } from '@drael/contracts';
import { AgentRunError } from '../agent-run-error.js';

/** Where a page starts: the row the `after`/`before` cursor names. */
export interface PageCursor {
  createdAt: Date;
  id: string;
}

/**
 * One page of a list ordered by (created_at, id), OpenAI's way: `after` continues in the list's
 * order past the cursor, `before` goes back towards its start. Keyset conditions, so a page is
 * stable while rows are added, and ties in created_at are broken by id.
 */
export function pageQuery(page: CursorPage, cursor: PageCursor | null) {
  const backwards = page.before !== undefined;
  const scanDesc = (page.order === 'desc') !== backwards;
  const past = scanDesc ? 'lt' : 'gt';
  const dir = scanDesc ? ('desc' as const) : ('asc' as const);
  return {
    where: cursor ? { OR: [{ createdAt: { [past]: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { [past]: cursor.id } }] } : {},
    orderBy: [{ createdAt: dir }, { id: dir }],
    // One more than the page: whether it is there says has_more.
    take: page.limit + 1,
    backwards,
  };
}

/** The page's rows in the list's order, and whether more lie beyond it. */
export function pageOf<T>(rows: T[], page: CursorPage): { items: T[]; hasMore: boolean } {
  const items = rows.slice(0, page.limit);
  if (page.before !== undefined) items.reverse();
  return { items, hasMore: rows.length > page.limit };
}

/** The cursor the page names, or a typed bad_request naming the param when it names nothing of the account's. */
export async function resolveCursor(page: CursorPage, find: (id: string) => Promise<PageCursor | null>): Promise<PageCursor | null> {
  if (page.after !== undefined && page.before !== undefined) {
    throw new AgentRunError('bad_request', 'give at most one of after and before', { param: 'after' });
  }
  const param = page.after !== undefined ? 'after' : page.before !== undefined ? 'before' : null;
  if (!param) return null;
  const id = (page.after ?? page.before)!;
  const cursor = await find(id);
  if (!cursor) throw new AgentRunError('bad_request', `${param}: no object ${id} in this list`, { param });
  return cursor;
}
