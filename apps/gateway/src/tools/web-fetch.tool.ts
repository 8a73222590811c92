import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { fetchCatalog, type FetchPageReply, type FetchPageRequest } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { ServiceHealth } from './service-health.js';
import { fetchRenderFor } from './tool-levels.js';
import { parseArguments } from './tool-arguments.js';
import { elideInlineData, failureOf, MAX_FIELD_BYTES, notFound, type ToolResult } from './tool-result.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

const ArgsSchema = z.object({
  url: z.string().min(1).max(8192),
  focus: z.string().max(1000).optional(),
  offset: z.number().int().nonnegative().max(1_000_000_000).optional(),
});

// The content's share of the field's 8 KiB (spec 01): what is left after the note on the cut.
const CONTENT_BUDGET_BYTES = MAX_FIELD_BYTES - 256;
// The smallest window worth asking for when a page's text is many UTF-8 bytes a character.
const MIN_WINDOW_CHARS = 512;

/**
 * web_fetch → fetch.page.v1. Real-browser rendering only for keys at `l4_browser` (spec 04);
 * below it the page is read over plain HTTP. Reusable outside the turn loop: `fetchPage()` and
 * `shapeFetch()`.
 */
@Injectable()
export class WebFetchTool implements ServerTool {
  readonly name = 'web_fetch' as const;

  constructor(
    private readonly rpc: NatsRpcClient,
    private readonly health: ServiceHealth,
  ) {}

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Read a web page (.onion too) as markdown. A long page comes a window at a time: go on with the offset the cut names, or ask for focus.',
        parameters: {
          type: 'object',
          properties: {
            url: { type: 'string' },
            focus: { type: 'string', description: 'What to look for: the passages about it, in page order' },
            offset: { type: 'integer', minimum: 0, description: 'Where to start reading, from an earlier cut' },
          },
          required: ['url'],
        },
      },
    };
  }

  isWired(): boolean | Promise<boolean> {
    return this.health.isUp('fetch');
  }

  fetchPage(request: FetchPageRequest, ctx: Pick<ToolContext, 'signal' | 'requestId'>): Promise<FetchPageReply> {
    return this.rpc.request(fetchCatalog.page, request, { signal: ctx.signal, requestId: ctx.requestId });
  }

  /**
   * The page's window from `offset`, cut by the fetch service at a paragraph, sentence or word so
   * that the content fits the field's 8 KiB with the note: asked as characters, which are one
   * byte each on most pages; a window that is more bytes than that (another script) is asked for
   * again, smaller in proportion (a cache hit at the service).
   */
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const parsed = parseArguments(ArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    const request = { ...parsed.value, render: fetchRenderFor(ctx.caller.tool_level), tenant: ctx.caller.account_id };
    try {
      let reply = await this.fetchPage({ ...request, max_chars: CONTENT_BUDGET_BYTES }, ctx);
      for (let attempt = 0; attempt < 2; attempt++) {
        const bytes = Buffer.byteLength(reply.content);
        if (bytes <= CONTENT_BUDGET_BYTES) break;
        const fewer = Math.max(MIN_WINDOW_CHARS, Math.floor(((reply.content.length * CONTENT_BUDGET_BYTES) / bytes) * 0.97));
        reply = await this.fetchPage({ ...request, max_chars: fewer }, ctx);
      }
      return shapeFetch(reply, parsed.value.offset ?? 0);
    } catch (err) {
      return failureOf(err, 'fetch_failed');
    }
  }
}

/**
 * The page as the model reads it. A window that stops before the page's end says so in the
 * content itself (spec 01: the cut stated in the text), with where it stands in the page and how
 * to read on.
 */
export function shapeFetch(reply: FetchPageReply, offset = 0): ToolResult {
  if (reply.content.trim() === '' && offset === 0) {
    return notFound(`the page ${reply.final_url} was fetched and holds no readable text`, { url: reply.final_url, title: reply.title });
  }
  const content = elideInlineData(reply.content);
  const total = reply.total_chars;
  const readOn = reply.next_offset !== undefined ? `call web_fetch again with offset=${reply.next_offset} to read on, or with focus to get the passages about a topic` : undefined;
  const note =
    total === undefined
      ? undefined
      : reply.content === '' && offset > 0
        ? `\n[the page has ${total} characters: offset=${offset} is past its end]`
        : readOn !== undefined
          ? `\n[cut: characters ${offset}-${offset + reply.chars} of ${total} are shown; ${readOn}]`
          : offset > 0
            ? `\n[characters ${offset}-${total} of ${total}: the end of the page]`
            : undefined;
  return {
    ok: true,
    url: reply.final_url,
    title: reply.title,
    content: note === undefined ? content : content + note,
    ...(reply.truncated ? { truncated: true } : {}),
    ...(reply.next_offset !== undefined ? { next_offset: reply.next_offset } : {}),
  };
}
