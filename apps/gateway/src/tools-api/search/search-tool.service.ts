import { Inject, Injectable } from '@nestjs/common';
import { searchCatalog } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { ApiError } from '../../errors/api-error.js';
import type { SearchToolRequest, SearchToolResponse } from './search-tool.schema.js';

/**
 * The standalone search endpoint over search.query.v1. No usage row and no charge: it is not a
 * model call (spec 04). Whenever no search ran (the service or SearXNG is down, every engine
 * failed), the answer is 503 search_unavailable.
 */
@Injectable()
export class SearchToolService {
  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

  async search(req: SearchToolRequest): Promise<SearchToolResponse> {
    const started = performance.now();
    let reply;
    try {
      reply = await this.nats.request(searchCatalog.query, {
        query: req.query,
        limit: req.max_results,
        ...(req.freshness ? { freshness: req.freshness } : {}),
        ...(req.onion !== undefined ? { onion: req.onion } : {}),
      });
    } catch (err) {
      if (isRpcError(err) && (err.code === 'unavailable' || err.code === 'timeout')) {
        throw new ApiError('search_unavailable', 'The search service is unavailable; retry later. Nothing was charged.');
      }
      throw ApiError.fromRpc(err) ?? err;
    }
    if (!reply.ok) {
      throw new ApiError('search_unavailable', `Search is unavailable: ${reply.reason}. Retry later; nothing was charged.`);
    }
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
      cached: reply.cached,
      coverage: reply.coverage,
      sources_tried: reply.sources_tried,
      degraded: reply.degraded,
      intent: reply.intent,
    };
  }
}
