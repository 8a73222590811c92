import { Injectable } from '@nestjs/common';
import { type InferenceChatReply, type InferenceChatRequest } from '@drael/contracts';
import { currentRequestId, newRequestId } from '@drael/logger';
import { ApiError } from '../errors/api-error.js';
import { ModelRegistry } from '../models/model-registry.js';
import { UpstreamClient, upstreamFailure } from '../upstream/upstream.client.js';
import { InferenceError, isGatewayErrorCode } from './inference-error.js';

interface UpstreamCompletion {
  model?: string;
  choices?: Array<{ message?: InferenceChatReply['message']; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * A chat completion for an internal caller (agent runs): the same alias routing and upstream
 * client as /v1/chat/completions, non-streamed, with the caller's max_tokens as a hard ceiling.
 * Seam: the account's rate limit and usage recording join here when the gateway's auth/billing
 * pipeline exposes them per account.
 */
@Injectable()
export class InferenceService {
  constructor(
    private readonly models: ModelRegistry,
    private readonly upstream: UpstreamClient,
  ) {}

  async chat(req: InferenceChatRequest): Promise<InferenceChatReply> {
    let route;
    try {
      route = this.models.resolve(req.model);
    } catch (err) {
      throw toRpc(err);
    }
    const body = { messages: req.messages, ...(req.tools?.length ? { tools: req.tools } : {}), max_tokens: req.max_tokens, stream: false };
    const abort = new AbortController();
    try {
      const res = await this.upstream.post(route, {
        path: '/chat/completions',
        // The deployment the router picks (and retries on another when it fails before answering).
        bodyFor: (model) => JSON.stringify({ ...body, model }),
        requestId: currentRequestId() ?? newRequestId(),
        signal: abort.signal,
        accept: 'application/json',
      });
      const parsed = JSON.parse(await res.body.text()) as UpstreamCompletion;
      const choice = parsed.choices?.[0];
      if (!choice?.message) throw new InferenceError('upstream_error', 'the model upstream answered without a message', true);
      const usage = { prompt_tokens: parsed.usage?.prompt_tokens ?? 0, completion_tokens: parsed.usage?.completion_tokens ?? 0 };
      this.upstream.recordUsage(res.deployment, usage);
      return {
        model: req.model,
        message: { ...choice.message, role: 'assistant', content: choice.message.content ?? null },
        finish_reason: choice.finish_reason ?? null,
        usage,
        deployment: res.deployment.name,
      };
    } catch (err) {
      throw toRpc(upstreamFailure(err) ?? err);
    }
  }
}

function toRpc(err: unknown): unknown {
  if (err instanceof ApiError) {
    // An upstream's own error code (its envelope's) is not one of ours: it travels as upstream_error.
    const code = isGatewayErrorCode(err.code) ? err.code : 'upstream_error';
    return new InferenceError(code, err.message, err.status >= 500 || err.status === 429, err.param ? { param: err.param } : undefined);
  }
  if (err instanceof SyntaxError) return new InferenceError('upstream_error', 'the model upstream answered with invalid JSON', true);
  return err;
}
