import { Injectable } from '@nestjs/common';
import { fetchCatalog, searchCatalog, type FetchPageReply, type FetchPageRequest, type SearchQueryReply, type SearchQueryRequest } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';

/**
 * What the hosted web tools need from the search and fetch services. One small interface so the
 * Responses loop can move onto the turn loop's shared tool adapters (apps/gateway/src/tools) once
 * they exist, without touching the tools' rules.
 */
export abstract class WebToolsPort {
  abstract search(request: SearchQueryRequest, signal: AbortSignal): Promise<SearchQueryReply>;
  abstract fetch(request: FetchPageRequest, signal: AbortSignal): Promise<FetchPageReply>;
}

/** The search.query.v1 and fetch.page.v1 subjects over the gateway's shared NATS client. */
@Injectable()
export class NatsWebTools extends WebToolsPort {
  constructor(private readonly nats: NatsRpcClient) {
    super();
  }

  search(request: SearchQueryRequest, signal: AbortSignal): Promise<SearchQueryReply> {
    return this.nats.request(searchCatalog.query, request, { signal });
  }

  fetch(request: FetchPageRequest, signal: AbortSignal): Promise<FetchPageReply> {
    return this.nats.request(fetchCatalog.page, request, { signal });
  }
}
