import { Controller, Inject } from '@nestjs/common';
import { fetchCatalog, type FetchPageReply, type FetchPageRequest } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { FetchRuntime } from '../fetch.runtime.js';

@Controller()
export class FetchPageController {
  constructor(@Inject(FetchRuntime) private readonly runtime: FetchRuntime) {}

  @Handles(fetchCatalog.page)
  page(req: FetchPageRequest): Promise<FetchPageReply> {
    return this.runtime.pages.fetch(req);
  }
}
