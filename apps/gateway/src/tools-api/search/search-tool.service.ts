import { Inject, Injectable } from '@nestjs/common';
import { searchCatalog, type SearchQueryReply } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { ApiError } from '../../errors/api-error.js';
import type { Caller } from '../../auth/identity.js';
import { assertToolAllowed } from '../../tools/tool-levels.js';
import type { SearchToolRequest, SearchToolResponse } from './search-tool.schema.js';
import { SearchAnswerMemo, type MemoKey } from './search-answer.memo.js';

/**
 * The standalone search endpoint over search.query.v1. No usage row and no charge: it is not a
 * model call (spec 04). Whenever no search ran (the service or SearXNG is down, every engine
 * failed), the answer is 503 search_unavailable. A search the service has cached is answered from
 * this replica's memo of it while the shared cache holds it (search-answer.memo.ts).
 */
@Injectable()
export class SearchToolService {
  /** Answers the search service has cached, kept here as long as its cache holds them (see the memo). */
  private readonly memo = new SearchAnswerMemo();

  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

  async search(req: SearchToolRequest, caller: Caller): Promise<SearchToolAnswer> {
    // As catalogue web_search: a key whose level serves no network read is refused before anything.
    assertToolAllowed(caller.tool_level, 'web_search');
    const started = performance.now();
    const ask: MemoKey = {
      query: req.query,
      limit: req.max_results,
      ...(req.freshness ? { freshness: req.freshness } : {}),
      ...(req.onion !== undefined ? { onion: req.onion } : {}),
    };
    const known = this.memo.get(ask);
    if (known) return { body: toResponse(known, true, started) };

    let reply;
    try {
      reply = await this.nats.request(searchCatalog.query, ask);
    } catch (err) {
      if (isRpcError(err) && (err.code === 'unavailable' || err.code === 'timeout')) {
        throw new ApiError('search_unavailable', 'The search service is unavailable; retry later. Nothing was charged.');
      }
      throw ApiError.fromRpc(err) ?? err;
    }
    if (!reply.ok) {
      throw new ApiError('search_unavailable', `Search is unavailable: ${reply.reason}. Retry later; nothing was charged.`);
    }
    this.memo.remember(ask, reply, started);
    return { body: toResponse(reply, reply.cached, started), serverTiming: serverTimingOf(reply) };
  }
}

/** The answer's body and, when the search service was asked, its Server-Timing header value. */
export interface SearchToolAnswer {
  body: SearchToolResponse;
  serverTiming?: string;
}

/**
 * `Server-Timing` (W3C) for a search the service answered: its own time and, when it asked
 * SearXNG, SearXNG's share, so a client or operator can tell SearXNG's latency from Drael's.
 */
function serverTimingOf(reply: Extract<SearchQueryReply, { ok: true }>): string {
  const search = `search;dur=${reply.took_ms}`;
  return reply.searx_ms === undefined ? search : `${search}, searxng;dur=${reply.searx_ms}`;
}

function toResponse(reply: Extract<SearchQueryReply, { ok: true }>, cached: boolean, started: number): SearchToolResponse {
  return {
    results: reply.results.map((r) => ({
      title: r.title,
      url: r.url,
      snippet: r.snippet,
      source: r.source,
      verified: r.verified,
      page_age: r.page_age,
    })),
    provider: 'drael',
    found: reply.found,
    ...(reply.note ? { note: reply.note } : {}),
    took_ms: Math.round(performance.now() - started),
    cached,
    coverage: reply.coverage,
    sources_tried: reply.sources_tried,
    degraded: reply.degraded,
    intent: reply.intent,
  };
}
