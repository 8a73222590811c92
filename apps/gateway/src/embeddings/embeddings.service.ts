import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { ChatProxyService, EMBEDDINGS } from '../chat/chat-proxy.service.js';
import { ModelRegistry } from '../models/model-registry.js';
import { EmbeddingsRequestSchema } from '../openai/embeddings.schema.js';
import { validateBody } from '../openai/validate.js';
import { forwardedBody } from '../openai/forwardable-body.js';

export interface EmbeddingsCall {
  /** The parsed JSON body, unvalidated. */
  readonly body: unknown;
  /** The body's bytes as received, forwarded untouched when the model name needs no change. */
  readonly rawBody?: Buffer;
  readonly requestId: string;
  readonly res: ServerResponse;
}

/**
 * POST /v1/embeddings: proxy mode's path to the alias's deployments (the same routing, retries,
 * cooldowns, bounds and token counting as a proxied chat completion), after the request is
 * checked here. Embeddings have no tools, so there is no catalogue mode.
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly models: ModelRegistry,
    private readonly proxy: ChatProxyService,
  ) {}

  handle(call: EmbeddingsCall): Promise<void> {
    const request = validateBody(EmbeddingsRequestSchema, call.body);
    const route = this.models.resolve(request.model);
    const body = forwardedBody(call.body as Record<string, unknown>, call.rawBody);
    return this.proxy.forward({
      route,
      endpoint: EMBEDDINGS,
      // A deployment sees its own model name; the bytes are re-encoded only when that name differs
      // or they are ambiguous (openai/forwardable-body.ts).
      bodyFor: (upstreamModel) => body(upstreamModel === request.model ? undefined : { model: upstreamModel }),
      stream: false,
      streamReportsUsage: false,
      requestId: call.requestId,
      res: call.res,
    });
  }
}
