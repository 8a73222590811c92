import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { KeyIdentity } from '@drael/contracts';
import { TurnLoopService } from '../turn-loop/turn-loop.service.js';
import { callerOf, sessionOf } from '../turn-loop/caller.js';
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from '../openai/chat-completion.schema.js';
import { validateBody } from '../openai/validate.js';
import { isCertainlyValidChatRequest } from '../openai/chat-completion.lean.js';
import { setHeaders } from '../rate-limit/rate-limit-headers.js';
import { ModelRegistry } from '../models/model-registry.js';
import { ChatProxyService } from './chat-proxy.service.js';
import { markMode } from '../metrics/gateway.metrics.js';
import { serverToolsWanted } from './server-tools-header.js';

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
  /** The verified key's identity, when an auth guard put one on the request. */
  readonly identity?: Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'>;
  /**
   * Headers for the answer's head not set on `res` yet (request id, rate limits): the proxy writes
   * them in its one writeHead; the turn loop, which writes its own heads, gets them set on `res`.
   */
  readonly head?: Record<string, string>;
}

/**
 * POST /v1/chat/completions: validates, resolves the model alias, then picks the mode.
 * A request that carries `tools` (or the legacy `functions` / `function_call`) is the client's own
 * loop and is always proxied as is (spec 01/04). Every other request is served Drael's catalogue by
 * the server-side turn loop, unless `x-drael-server-tools: 0` asks for a plain proxied completion
 * (spec/README).
 */
@Injectable()
export class ChatCompletionsService {
  constructor(
    private readonly models: ModelRegistry,
    private readonly proxy: ChatProxyService,
    private readonly loop: TurnLoopService,
  ) {}

  async handle(call: ChatCall): Promise<void> {
    // Proxy mode forwards the body untouched, so a body the lean check is sure of needs no zod
    // parse (and its copy); anything else, and every turn-loop body, goes through zod.
    const request =
      isCertainlyValidChatRequest(call.body) && this.modeOf(call.body, call.headers) === 'proxy'
        ? call.body
        : validateBody(ChatCompletionRequestSchema, call.body);
    const route = this.models.resolve(request.model);
    switch (this.modeOf(request, call.headers)) {
      case 'loop':
        markMode(call.res, 'catalogue');
        if (call.head) setHeaders(call.res, call.head);
        return this.loop.handle({
          request,
          route,
          caller: callerOf(call.identity),
          session: sessionOf(call.headers),
          requestId: call.requestId,
          res: call.res,
          toolEvents: headerValue(call.headers, 'x-drael-tool-events') === '1',
        });
      case 'proxy':
        markMode(call.res, 'proxy');
        return this.proxy.forward({
          route,
          bodyFor: upstreamBodyFor(call, request.model),
          stream: request.stream === true,
          requestId: call.requestId,
          res: call.res,
          head: call.head,
        });
    }
  }

  modeOf(request: ChatCompletionRequest, headers: ChatCall['headers']): ChatMode {
    // The header is checked first: a bad value is a 400 whatever the body holds.
    const serverTools = serverToolsWanted(headers);
    if (request.tools !== undefined || request.functions !== undefined || request.function_call !== undefined) return 'proxy';
    return serverTools ? 'loop' : 'proxy';
  }
}

/** A deployment sees its own model name; the bytes are re-encoded only when that name differs. */
function upstreamBodyFor(call: ChatCall, alias: string): (upstreamModel: string) => string | Buffer {
  return (upstreamModel) => {
    if (alias === upstreamModel && call.rawBody) return call.rawBody;
    return JSON.stringify({ ...(call.body as Record<string, unknown>), model: upstreamModel });
  };
}

function headerValue(headers: ChatCall['headers'], name: string): string | undefined {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}
