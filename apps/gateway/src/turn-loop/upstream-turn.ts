import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiError } from '../errors/api-error.js';
import { upstreamFailure, type UpstreamClient, type UpstreamTarget } from '../upstream/upstream.client.js';

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

// An upstream error body longer than this is cut: it only has to carry a message.
const MAX_ERROR_BODY_CHARS = 64 * 1024;

/**
 * Calls the upstream for one turn, always streamed, and reads the SSE answer: text deltas go to
 * `onText` as they arrive (so text before a tool call reaches the client at once), tool calls
 * are assembled from their pieces, usage is taken from the final chunk.
 */
export async function streamTurn(
  upstream: UpstreamClient,
  target: UpstreamTarget,
  body: Record<string, unknown>,
  options: { requestId: string; signal: AbortSignal; onText?: (text: string) => void | Promise<void> },
): Promise<TurnOutcome> {
  const res = await upstream.post(target, {
    path: '/chat/completions',
    body: JSON.stringify(body),
    requestId: options.requestId,
    signal: options.signal,
    accept: 'text/event-stream',
  });
  if (res.statusCode >= 400) throw await upstreamErrorOf(res.statusCode, res.body);

  const outcome: TurnOutcome = { content: '', toolCalls: [], finishReason: null, usage: { prompt_tokens: 0, completion_tokens: 0 } };
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
  outcome.toolCalls = calls
    .filter((c) => c !== undefined && c.name !== '')
    .map((c, i) => ({ id: c.id || `call_drael_${i}`, name: c.name, arguments: c.arguments }));
  return outcome;
}

/** An upstream 4xx/5xx as the client-facing error: its status, its envelope's message when it sent one. */
async function upstreamErrorOf(status: number, body: AsyncIterable<unknown>): Promise<ApiError> {
  let text = '';
  try {
    for await (const chunk of body) {
      if (text.length < MAX_ERROR_BODY_CHARS) text += (chunk as Buffer).toString('utf8');
    }
  } catch {
    // the message is best effort; the status still goes through
  }
  let message = text.trim().slice(0, 500);
  let code = 'upstream_error';
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } };
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
    if (typeof parsed.error?.code === 'string') code = parsed.error.code;
  } catch {
    // not JSON
  }
  const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  return new ApiError(code, `The model upstream answered ${status}${message ? `: ${message}` : ''}`, null, { status, type });
}
