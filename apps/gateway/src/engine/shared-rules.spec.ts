import type { FetchPageReply, SearchQueryReply } from '@drael/contracts';
import { describe, expect, it } from 'vitest';
import { runWebSearch } from '../responses/hosted/web-search.tool.js';
import { WebToolsPort } from '../responses/hosted/web-tools.port.js';
import { WebSearchToolSchema } from '../responses/responses.schema.js';
import { renderResult } from '../tools/tool-result.js';
import { shapeSearch } from '../tools/web-search.tool.js';

// issue 16: one tool-result cut for both loops. The same search reply reaches the model of a chat
// completion (tools/web-search.tool.ts, rendered by the turn loop) and of a Responses request
// (the hosted web_search): a snippet over 8 KiB is cut at the same place with the same note.
const snippet = `${'é'.repeat(6_000)}tail`;
const reply: SearchQueryReply = {
  ok: true,
  found: true,
  results: [{ title: 'Long', url: 'https://example.org/long', snippet, source: 'fixture', engines: ['fixture'], page_age: null, verified: false }],
  degraded: [],
  coverage: 1,
  sources_tried: ['fixture'],
  intent: 'general',
  took_ms: 1,
  cached: false,
};

/** The search service's reply as given (the hosted tool's one port onto the service). */
class ReplyPort extends WebToolsPort {
  search(): Promise<SearchQueryReply> {
    return Promise.resolve(reply);
  }
  fetch(): Promise<FetchPageReply> {
    return Promise.reject(new Error('not used'));
  }
}

describe('one tool-result cut for chat and Responses', () => {
  it('a field over 8 KiB reads the same, note included, from a chat tool and a hosted Responses tool', async () => {
    const chat = JSON.parse(renderResult(shapeSearch(reply))) as { results: Array<{ snippet: string }> };
    const hosted = await runWebSearch(
      'long',
      WebSearchToolSchema.parse({ type: 'web_search' }),
      {
        accountId: 'acct',
        toolLevel: 'l4_browser',
        allowedDomains: [],
        signal: new AbortController().signal,
        requestId: 'req',
      },
      new ReplyPort(),
    );
    const hostedSnippet = (hosted.forModel.results as Array<{ snippet: string }>)[0]!.snippet;

    expect(hostedSnippet).toBe(chat.results[0]!.snippet);
    expect(hostedSnippet).toMatch(/\n\[cut: the first 8192 of 12004 bytes are shown; the rest was dropped\]$/);
    expect(Buffer.byteLength(hostedSnippet)).toBeLessThanOrEqual(8192);
  });
});
