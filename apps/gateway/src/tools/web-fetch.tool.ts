import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { fetchCatalog, type FetchPageReply, type FetchPageRequest } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { ServiceHealth } from './service-health.js';
import { fetchRenderFor } from './tool-levels.js';
import { parseArguments } from './tool-arguments.js';
import { elideInlineData, failureOf, notFound, type ToolResult } from './tool-result.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

const ArgsSchema = z.object({
  url: z.string().min(1).max(8192),
  focus: z.string().max(1000).optional(),
});

// What one page may put in the prompt: the result's content field is cut at 8 KiB anyway,
// so asking the service for much more only moves bytes to throw away.
const FETCH_MAX_CHARS = 16_000;

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
        description: 'Read a web page (.onion too) as markdown.',
        parameters: {
          type: 'object',
          properties: { url: { type: 'string' }, focus: { type: 'string', description: 'What to look for' } },
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

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const parsed = parseArguments(ArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    try {
      const reply = await this.fetchPage(
        {
          ...parsed.value,
          max_chars: FETCH_MAX_CHARS,
          render: fetchRenderFor(ctx.caller.tool_level),
          tenant: ctx.caller.account_id,
        },
        ctx,
      );
      return shapeFetch(reply);
    } catch (err) {
      return failureOf(err, 'fetch_failed');
    }
  }
}

export function shapeFetch(reply: FetchPageReply): ToolResult {
  if (reply.content.trim() === '') {
    return notFound(`the page ${reply.final_url} was fetched and holds no readable text`, { url: reply.final_url, title: reply.title });
  }
  return {
    ok: true,
    url: reply.final_url,
    title: reply.title,
    content: elideInlineData(reply.content),
    ...(reply.truncated ? { truncated: true } : {}),
  };
}
