import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { FreshnessSchema, MAX_SEARCH_LIMIT, MAX_SEARCH_QUERY_CHARS, searchCatalog, type SearchQueryReply, type SearchQueryRequest } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { ServiceHealth } from './service-health.js';
import { parseArguments } from './tool-arguments.js';
import { failed, failureOf, notFound, type ToolResult } from './tool-result.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

const ArgsSchema = z.object({
  query: z.string().trim().min(1).max(MAX_SEARCH_QUERY_CHARS),
  // spec 01: limit is honoured up to 20 and defaults to 10.
  limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional(),
  freshness: FreshnessSchema.optional(),
  onion: z.boolean().optional(),
});

/**
 * web_search → search.query.v1 (Drael's own SearXNG). Reusable outside the turn loop (the
 * Responses API): `search()` gives the service's reply, `shapeSearch()` the model's document.
 */
@Injectable()
export class WebSearchTool implements ServerTool {
  readonly name = 'web_search' as const;

  constructor(
    private readonly rpc: NatsRpcClient,
    private readonly health: ServiceHealth,
  ) {}

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Search the web. onion: true searches hidden services.',
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string' },
            limit: { type: 'integer', description: '1-20, default 10' },
            freshness: { type: 'string', enum: ['day', 'week', 'month', 'year'] },
            onion: { type: 'boolean' },
          },
          required: ['query'],
        },
      },
    };
  }

  isWired(): boolean | Promise<boolean> {
    return this.health.isUp('search');
  }

  search(request: SearchQueryRequest, ctx: Pick<ToolContext, 'signal' | 'requestId'>): Promise<SearchQueryReply> {
    return this.rpc.request(searchCatalog.query, request, { signal: ctx.signal, requestId: ctx.requestId });
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const parsed = parseArguments(ArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    try {
      return shapeSearch(await this.search(parsed.value, ctx));
    } catch (err) {
      return failureOf(err, 'search_failed');
    }
  }
}

/** found:false when every engine answered with nothing; ok:false when the engines could not answer. */
export function shapeSearch(reply: SearchQueryReply): ToolResult {
  if (!reply.ok) return failed(reply.code, reply.reason, reply.degraded.length ? { degraded: reply.degraded } : {});
  if (!reply.found || reply.results.length === 0) {
    return notFound(reply.note ?? `the search engines (${reply.sources_tried.join(', ') || 'all'}) were queried and hold nothing for this query`);
  }
  return {
    ok: true,
    found: true,
    results: reply.results.map((r) => ({
      title: r.title,
      url: r.url,
      snippet: r.snippet,
      ...(r.page_age ? { page_age: r.page_age } : {}),
      ...(r.verified ? { verified: true } : {}),
    })),
    ...(reply.degraded.length ? { degraded: reply.degraded } : {}),
  };
}
