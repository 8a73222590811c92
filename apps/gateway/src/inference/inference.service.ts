import { Injectable } from '@nestjs/common';
import type { InferenceChatReply, InferenceChatRequest } from '@drael/contracts';
import { currentRequestId, newRequestId } from '@drael/logger';
import { ApiError } from '../errors/api-error.js';
import { ModelRegistry } from '../models/model-registry.js';
import { turnOfText } from '../engine/turn-stream.reader.js';
import { UpstreamClient } from '../upstream/upstream.client.js';
import { withOutputLimitAs } from '../upstream/output-limit.js';
import { upstreamFailure, upstreamFailureCode } from '../upstream/upstream-failure.js';
import { InferenceError } from './inference-error.js';

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
      if (err instanceof ApiError && err.code === 'model_not_found') throw new InferenceError('model_not_found', err.message, false, { param: 'model' });
      throw err;
    }
    const body = { messages: req.messages, ...(req.tools?.length ? { tools: req.tools } : {}), max_tokens: req.max_tokens, stream: false };
    const abort = new AbortController();
    try {
      const res = await this.upstream.read(route, {
        path: '/chat/completions',
        // The deployment the router picks (and retries on another when it fails before answering).
        bodyFor: (model, deployment) => JSON.stringify({ ...withOutputLimitAs(body, deployment.max_tokens_param), model }),
        requestId: currentRequestId() ?? newRequestId(),
        signal: abort.signal,
        accept: 'application/json',
      });
      // The engine's reader of a non-streamed answer (the loops' too): one reading of choices, tool calls, usage and errors.
      const answer = await turnOfText(res.text, abort.signal);
      // No choice at all (no text, no call, no finish reason) is no answer for an agent's step: retried, as before.
      if (answer.finishReason === null && answer.content === '' && answer.toolCalls.length === 0) {
        throw new InferenceError('upstream_error', 'the model upstream answered without a message', true);
      }
      this.upstream.recordUsage(res.deployment, answer.usage);
      return {
        model: req.model,
        message: {
          role: 'assistant',
          // OpenAI's shape: no text beside tool calls is null.
          content: answer.content === '' && answer.toolCalls.length > 0 ? null : answer.content,
          ...(answer.toolCalls.length > 0 ? { tool_calls: answer.toolCalls } : {}),
        },
        finish_reason: answer.finishReason,
        usage: answer.usage,
        deployment: res.deployment.name,
      };
    } catch (err) {
      throw inferenceFailure(upstreamFailure(err) ?? err);
    }
  }
}

/**
 * An upstream failure as this subject answers it: its Drael code (upstreamFailureCode: never an
 * upstream's own), retryable when the upstream's status says a later try may work. Anything else
 * (an abort, a bug) is not translated: the decorator answers it as `internal`.
 */
function inferenceFailure(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  return new InferenceError(upstreamFailureCode(err), err.message, err.status >= 500 || err.status === 429, err.param ? { param: err.param } : undefined);
}
