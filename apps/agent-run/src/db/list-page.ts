import type { CursorPage } from '@drael/contracts';
import type { NatsRpcClient } from '@drael/nats-rpc';
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

// What a list reply needs besides its items (the envelope, has_more, a packet id, headers such as
// traceparent): generous, so a page that fits here always fits the message.
const REPLY_ENVELOPE_BYTES = 16 * 1024;
// nats-server's default max_payload, for a connection that has not told it yet.
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** How many bytes of items one list reply may carry on this NATS server. */
export function pageRoomBytes(rpc: NatsRpcClient): number {
  return (rpc.connection.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - REPLY_ENVELOPE_BYTES;
}

/**
 * The page as the reply shows it (`view` of each row), in the list's order, and whether more lie
 * beyond it. The one rule of every list's size: at most `limit` items, and no more than fit in
 * `roomBytes` of JSON, since a reply is one NATS message (attack report 4, F5: a page of large
 * agents or runs was refused whole with 413). A page cut short says has_more, and its last id (in
 * the direction of the scan) continues it, as OpenAI's lists may return fewer than `limit`. The
 * first item is always kept, so paging never stalls; one that alone does not fit is the 413 it was.
 * `rows` are the query's, in scan order (pageQuery: the nearest the cursor first, one extra).
 */
export function pageOf<R, T>(rows: R[], page: CursorPage, view: (row: R) => T, roomBytes: number): { items: T[]; hasMore: boolean } {
  const items: T[] = [];
  let bytes = 0;
  let cut = false;
  for (const row of rows.slice(0, page.limit)) {
    const item = view(row);
    // Its JSON and the comma between items.
    const size = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
    if (items.length > 0 && bytes + size > roomBytes) {
      cut = true;
      break;
    }
    items.push(item);
    bytes += size;
  }
  if (page.before !== undefined) items.reverse();
  return { items, hasMore: cut || rows.length > page.limit };
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
