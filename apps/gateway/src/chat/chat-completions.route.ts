import { KeyedJsonPostRoute, type HotCall, type HotRouteDeps } from '../http/hot-route.js';
import { ChatCompletionsService } from './chat-completions.service.js';

/**
 * POST /v1/chat/completions served ahead of Fastify and Nest (the gateway's hot path: every
 * proxied completion). The plumbing is KeyedJsonPostRoute's; ChatCompletionsService writes the
 * answer, streamed or not, as it does for the Nest controller.
 */
export class ChatCompletionsRoute extends KeyedJsonPostRoute {
  constructor(
    deps: HotRouteDeps,
    private readonly chat: ChatCompletionsService,
  ) {
    super('/v1/chat/completions', deps);
  }

  protected handle(call: HotCall): Promise<void> {
    return this.chat.handle(call);
  }
}
