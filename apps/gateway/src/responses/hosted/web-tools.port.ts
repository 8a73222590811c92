import { Injectable } from '@nestjs/common';
import type { FetchPageReply, FetchPageRequest, SearchQueryReply, SearchQueryRequest } from '@drael/contracts';
import { WebFetchTool } from '../../tools/web-fetch.tool.js';
import { WebSearchTool } from '../../tools/web-search.tool.js';

export interface WebCallContext {
  readonly signal: AbortSignal;
  readonly requestId: string;
}

/**
 * What the hosted web tools need from the search and fetch services: one small interface, so the
 * Responses rules (engines, domain filters, items) stay apart from how a service is reached.
 */
export abstract class WebToolsPort {
  abstract search(request: SearchQueryRequest, ctx: WebCallContext): Promise<SearchQueryReply>;
  abstract fetch(request: FetchPageRequest, ctx: WebCallContext): Promise<FetchPageReply>;
}

/**
 * Through the turn loop's tool adapters (apps/gateway/src/tools): the same search.query.v1 and
 * fetch.page.v1 calls chat completions make. Responses shapes the results itself, because its
 * items and limits differ (spec 02: pages up to 1 MiB, sources for citations).
 */
@Injectable()
export class ToolAdapterWebTools extends WebToolsPort {
  constructor(
    private readonly searchTool: WebSearchTool,
    private readonly fetchTool: WebFetchTool,
  ) {
    super();
  }

  search(request: SearchQueryRequest, ctx: WebCallContext): Promise<SearchQueryReply> {
    return this.searchTool.search(request, ctx);
  }

  fetch(request: FetchPageRequest, ctx: WebCallContext): Promise<FetchPageReply> {
    return this.fetchTool.fetchPage(request, ctx);
  }
}
