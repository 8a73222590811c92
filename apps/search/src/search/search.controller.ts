import { Controller, Inject } from '@nestjs/common';
import { searchCatalog, type SearchQueryReply, type SearchQueryRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SearchService } from './search.service.js';

@Controller()
export class SearchController {
  constructor(@Inject(SearchService) private readonly search: SearchService) {}

  @Handles(searchCatalog.query)
  query(req: SearchQueryRequest): Promise<SearchQueryReply> {
    return this.search.search(req);
  }
}
