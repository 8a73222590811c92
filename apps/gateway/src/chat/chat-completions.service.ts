import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from '../openai/chat-completion.schema.js';
import { validateBody } from '../openai/validate.js';
import { ModelRegistry } from '../models/model-registry.js';
import { ChatProxyService } from './chat-proxy.service.js';

/** How one chat completion is served. */
export type ChatMode = 'proxy' | 'loop';

export interface ChatCall {
  /** The parsed JSON body, unvalidated. */
  readonly body: unknown;
  /** The body's bytes as received, forwarded untouched when nothing in it has to change. */
  readonly rawBody?: Buffer;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly requestId: string;
  readonly res: ServerResponse;
}

/**
 * POST /v1/chat/completions: validates, resolves the model alias, then picks the mode.
 * A request that carries `tools` is the client's own loop and is always proxied (spec 01/04).
 * The server-side turn loop (issue 7) takes the other requests; until it exists they are
 * proxied as plain completions too.
 */
@Injectable()
export class ChatCompletionsService {
  constructor(
    private readonly models: ModelRegistry,
    private readonly proxy: ChatProxyService,
  ) {}

  async handle(call: ChatCall): Promise<void> {
    const request = validateBody(ChatCompletionRequestSchema, call.body);
    const route = this.models.resolve(request.model);
    switch (this.modeOf(request, call.headers)) {
      case 'proxy':
      case 'loop': // issue 7 replaces this with the turn loop
        return this.proxy.forward({
          route,
          body: upstreamBody(call, request.model, route.model),
          stream: request.stream === true,
          requestId: call.requestId,
          res: call.res,
        });
    }
  }

  modeOf(request: ChatCompletionRequest, _headers: ChatCall['headers']): ChatMode {
    if (request.tools !== undefined) return 'proxy';
    // The turn loop is not built yet: every request is a plain proxied completion for now.
    return 'proxy';
  }
}

/** The upstream sees its own model name; the bytes are re-encoded only when that name differs. */
function upstreamBody(call: ChatCall, alias: string, upstreamModel: string): string | Buffer {
  if (alias === upstreamModel && call.rawBody) return call.rawBody;
  return JSON.stringify({ ...(call.body as Record<string, unknown>), model: upstreamModel });
}
