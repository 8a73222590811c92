import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { callerOf, type Caller } from '../auth/identity.js';
import { TurnLoopService } from '../turn-loop/turn-loop.service.js';
import { KeyGate } from '../auth/key-gate.service.js';
import { sessionOf } from '../sessions/session-id.js';
import { ChatCompletionRequestSchema, type ChatCompletionRequest } from '../openai/chat-completion.schema.js';
import { withoutVendorFrames } from '../openai/vendor-frame.js';
import { validateBody } from '../openai/validate.js';
import { isCertainlyValidChatRequest } from '../openai/chat-completion.lean.js';
import { ModelRegistry } from '../models/model-registry.js';
import { ChatProxyService } from './chat-proxy.service.js';
import { markMode } from '../metrics/gateway.metrics.js';
import { serverToolsWanted } from './server-tools-header.js';
import { forwardedBody } from '../openai/forwardable-body.js';

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
  /** The verified key's identity (KeyGate on the hot route, the route's access hook on Fastify's). */
  readonly identity: Caller;
  /**
   * Headers for the answer's head not set on `res` yet (request id, rate limits): the proxy writes
   * them in its one writeHead; the turn loop, which writes its own heads, gets them set on `res`.
   */
  readonly head?: Record<string, string>;
}

/**
 * POST /v1/chat/completions, the one implementation behind both ways in (the hot route and
 * Fastify's controller): decides the mode once, validates the body once, resolves the alias.
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
    private readonly keys: KeyGate,
  ) {}

  async handle(call: ChatCall): Promise<void> {
    const mode = modeOf(call.body, call.headers);
    // A body the lean check is sure of needs no zod parse (and its deep copy); anything else goes
    // through zod, which accepts it or names the bad param. Both modes may take the body as it
    // came: the proxy forwards it untouched, and the turn loop copies what it changes (its base
    // body, its messages) and never writes to the client's objects (issue 20).
    const validated = isCertainlyValidChatRequest(call.body) ? call.body : validateBody(ChatCompletionRequestSchema, call.body);
    // Drael's own stream frames, when a client sent them back in its history, go no further.
    const messages = withoutVendorFrames(validated.messages);
    const request = messages === validated.messages ? validated : { ...validated, messages: messages as ChatCompletionRequest['messages'] };
    const route = this.models.resolve(request.model);
    if (mode === 'loop') {
      markMode(call.res, 'catalogue');
      return this.loop.handle({
        head: call.head ?? {},
        request,
        route,
        caller: callerOf(call.identity),
        session: sessionOf(call.headers),
        requestId: call.requestId,
        res: call.res,
        toolEvents: headerValue(call.headers, 'x-drael-tool-events') === '1',
        recheckKey: this.keys.recheckOf(call.headers),
      });
    }
    markMode(call.res, 'proxy');
    return this.proxy.forward({
      route,
      bodyFor: upstreamBodyFor(call, request.model, messages === validated.messages ? undefined : messages),
      stream: request.stream === true,
      streamReportsUsage: request.stream_options?.include_usage === true,
      requestId: call.requestId,
      res: call.res,
      head: call.head,
    });
  }
}

/**
 * The mode, decided once from the body as received (only which fields are present counts, so it
 * needs no validated copy). The header is checked first: a bad value is a 400 whatever the body holds.
 */
function modeOf(body: unknown, headers: ChatCall['headers']): ChatMode {
  const serverTools = serverToolsWanted(headers);
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  // null is "not given" (OpenAI reads it so), and an empty list carries no tool: no client tools.
  if (carriesTools(b.tools) || carriesTools(b.functions) || b.function_call != null) return 'proxy';
  // `tool_choice: "none"` asks for an answer without tools: a plain completion, as with the header.
  if (b.tool_choice === 'none') return 'proxy';
  // Several candidate answers (`n` > 1): the loop writes one answer, so they are a plain completion.
  if (typeof b.n === 'number' && b.n > 1) return 'proxy';
  return serverTools ? 'loop' : 'proxy';
}

/** The client's own tools (or legacy functions): a list with at least one. */
function carriesTools(list: unknown): boolean {
  return Array.isArray(list) ? list.length > 0 : list != null;
}

/**
 * A deployment sees its own model name; the client's bytes are re-encoded only when that name
 * differs, when `messages` replaces the client's (withoutVendorFrames took something off), or when
 * they could be read otherwise than the gateway read them (openai/forwardable-body.ts).
 */
function upstreamBodyFor(call: ChatCall, alias: string, messages?: readonly unknown[]): (upstreamModel: string) => string | Buffer {
  const body = forwardedBody(call.body as Record<string, unknown>, call.rawBody);
  return (upstreamModel) => body(alias === upstreamModel && !messages ? undefined : { model: upstreamModel, ...(messages ? { messages } : {}) });
}

function headerValue(headers: ChatCall['headers'], name: string): string | undefined {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}
