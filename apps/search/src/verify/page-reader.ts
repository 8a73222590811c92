import { fetchCatalog } from '@drael/contracts';
import type { NatsRpcClient } from '@drael/nats-rpc';

/** Reads a live page's text. */
export interface PageReader {
  read(url: string, timeoutMs: number): Promise<string>;
}

// Enough text to find a snippet in; fetch's own cap is 1 MiB.
const MAX_PAGE_CHARS = 200_000;

/** Pages through the fetch service (fetch.page.v1): its SSRF guard, Tor for .onion, its cache. */
export class FetchServicePageReader implements PageReader {
  constructor(private readonly rpc: NatsRpcClient) {}

  async read(url: string, timeoutMs: number): Promise<string> {
    const page = await this.rpc.request(fetchCatalog.page, { url, max_chars: MAX_PAGE_CHARS }, { timeoutMs });
    return `${page.title ?? ''}\n${page.description ?? ''}\n${page.content}`;
  }
}
