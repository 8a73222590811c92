import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiError } from '../errors/api-error.js';
import type { DeploymentConfig } from '../models/model-routes.config.js';
import type { ResolvedModel } from '../models/model-registry.js';
import { upstreamFailure, type UpstreamClient } from '../upstream/upstream.client.js';

export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface UpstreamToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One model turn, read to its end. */
export interface TurnOutcome {
  content: string;
  toolCalls: UpstreamToolCall[];
  finishReason: string | null;
  usage: TurnUsage;
  /** The deployment that served the turn (its prices are the turn's cost). */
  deployment: DeploymentConfig;
}

interface ChunkChoice {
  index?: number;
  delta?: {
    content?: string | null;
    tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
  };
  finish_reason?: string | null;
}
interface Chunk {
  choices?: ChunkChoice[];
  usage?: Partial<TurnUsage> | null;
  error?: { message?: string };
}

/**
 * Calls the upstream for one turn, always streamed, and reads the SSE answer: text deltas go to
 * `onText` as they arrive (so text before a tool call reaches the client at once), tool calls
 * are assembled from their pieces, usage is taken from the final chunk. The alias's router picks
 * the deployment and retries a failed attempt before any of it was read.
 */
export async function streamTurn(
  upstream: UpstreamClient,
  route: ResolvedModel,
  body: Record<string, unknown>,
  options: {
    requestId: string;
    signal: AbortSignal;
    onText?: (text: string) => void | Promise<void>;
    /** Called once a deployment accepted the turn (before any text), with its name. */
    onUpstream?: (deployment: string) => void;
  },
): Promise<TurnOutcome> {
  const res = await upstream.post(route, {
    path: '/chat/completions',
    bodyFor: (model) => JSON.stringify({ ...body, model }),
    requestId: options.requestId,
    signal: options.signal,
    accept: 'text/event-stream',
  });
  options.onUpstream?.(res.deployment.name);

  const outcome: TurnOutcome = { content: '', toolCalls: [], finishReason: null, usage: { prompt_tokens: 0, completion_tokens: 0 }, deployment: res.deployment };
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  const pending: string[] = [];
  let failure: ApiError | undefined;

  const onEvent = (event: EventSourceMessage) => {
    if (event.data === '[DONE]' || failure) return;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(event.data) as Chunk;
    } catch {
      failure = new ApiError('upstream_error', 'The model upstream sent an event that is not JSON');
      return;
    }
    if (chunk.error) {
      failure = new ApiError('upstream_error', `The model upstream failed mid-answer: ${chunk.error.message ?? 'unknown error'}`);
      return;
    }
    if (chunk.usage) {
      outcome.usage = { prompt_tokens: chunk.usage.prompt_tokens ?? 0, completion_tokens: chunk.usage.completion_tokens ?? 0 };
    }
    // One choice: catalogue mode serves n = 1.
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const text = choice.delta?.content;
    if (text) {
      outcome.content += text;
      pending.push(text);
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const i = piece.index ?? calls.length;
      const call = (calls[i] ??= { id: '', name: '', arguments: '' });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
    }
    if (choice.finish_reason) outcome.finishReason = choice.finish_reason;
  };
  const parser = createParser({ onEvent });
  const decoder = new TextDecoder();

  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (failure) break;
      if (pending.length > 0 && options.onText) {
        const text = pending.length === 1 ? pending[0]! : pending.join('');
        pending.length = 0;
        await options.onText(text);
      }
      pending.length = 0;
    }
  } catch (err) {
    if (options.signal.aborted) throw err;
    throw upstreamFailure(err) ?? new ApiError('upstream_error', 'The model upstream answer was cut off');
  }
  if (failure) {
    res.body.destroy();
    throw failure;
  }
  upstream.recordUsage(res.deployment, outcome.usage);
  outcome.toolCalls = calls
    .filter((c) => c !== undefined && c.name !== '')
    .map((c, i) => ({ id: c.id || `call_drael_${i}`, name: c.name, arguments: c.arguments }));
  return outcome;
}
