import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ApiError } from '../errors/api-error.js';
import { answerFailure } from '../upstream/upstream-failure.js';

export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A tool call the model made, in the chat-completions shape both loops send back upstream. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One model turn's answer, read to its end. */
export interface TurnAnswer {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: TurnUsage;
}

interface ChunkChoice {
  delta?: {
    content?: string | null;
    tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
  };
  finish_reason?: string | null;
}
interface Chunk {
  choices?: ChunkChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/**
 * The one reader of a streamed chat completion (both loops): text deltas are handed on as they
 * arrive, one call per network read with that read's deltas in order (so text before a tool call
 * reaches the client at once, and the chat writer writes once per read; the read that ends the
 * answer with `[DONE]` is handed on when the body ends, with the finish); tool calls are joined
 * from their pieces by index; usage comes from the final chunk. A chunk that is not JSON, an error
 * chunk, or a body that breaks off is the one `upstream_*` error of answerFailure.
 */
export async function readTurnStream(
  body: AsyncIterable<unknown> & { destroy(): void },
  signal: AbortSignal,
  onText?: (deltas: readonly string[]) => void | Promise<void>,
): Promise<TurnAnswer> {
  const answer: TurnAnswer = { content: '', toolCalls: [], finishReason: null, usage: { prompt_tokens: 0, completion_tokens: 0 } };
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  const pending: string[] = [];
  let failure: ApiError | undefined;
  let done = false;

  const onEvent = (event: EventSourceMessage) => {
    if (event.data === '[DONE]') {
      done = true;
      return;
    }
    if (failure) return;
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
    if (chunk.usage) answer.usage = { prompt_tokens: chunk.usage.prompt_tokens ?? 0, completion_tokens: chunk.usage.completion_tokens ?? 0 };
    // One choice: both loops ask for n = 1.
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const text = choice.delta?.content;
    if (typeof text === 'string' && text.length > 0) {
      answer.content += text;
      pending.push(text);
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const i = piece.index ?? calls.length;
      const call = (calls[i] ??= { id: '', name: '', arguments: '' });
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) call.arguments += piece.function.arguments;
    }
    if (choice.finish_reason) answer.finishReason = choice.finish_reason;
  };
  const parser = createParser({ onEvent });
  const decoder = new StringDecoder('utf8');
  const flush = async () => {
    if (pending.length === 0) return;
    const deltas = pending.splice(0);
    if (onText) await onText(deltas);
  };

  try {
    for await (const chunk of body) {
      parser.feed(decoder.write(chunk as Buffer));
      if (failure) break;
      // The read that holds `[DONE]` hands its text on at the body's end, a moment later: the
      // answer's last text and the finish the loop writes next then leave in one client write
      // (issue 20: one socket write fewer per streamed answer whose end comes in one read).
      if (!done) await flush();
    }
    if (!failure) {
      parser.feed(decoder.end());
      await flush();
    }
  } catch (err) {
    if (signal.aborted) throw err;
    throw answerFailure(err);
  }
  if (failure) {
    body.destroy();
    throw failure;
  }
  answer.toolCalls = calls
    .filter((c) => c !== undefined && c.name !== '')
    .map((c, i) => ({ id: c.id || `call_drael_${i}`, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return answer;
}

interface Completion {
  choices?: Array<{
    message?: { content?: string | null; tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string };
}

/**
 * The same turn read from a non-streamed completion, its text read whole by UpstreamClient.read
 * (issue 20: a client that does not stream needs no upstream stream): the same answer, tool
 * calls, usage and errors as readTurnStream, the text handed on once, whole.
 */
export async function turnOfJson(text: string, onText?: (deltas: readonly string[]) => void | Promise<void>): Promise<TurnAnswer> {
  let completion: Completion;
  try {
    completion = JSON.parse(text) as Completion;
  } catch {
    throw new ApiError('upstream_error', 'The model upstream sent an answer that is not JSON');
  }
  if (completion.error) throw new ApiError('upstream_error', `The model upstream failed mid-answer: ${completion.error.message ?? 'unknown error'}`);
  const choice = completion.choices?.[0];
  const content = typeof choice?.message?.content === 'string' ? choice.message.content : '';
  if (content.length > 0 && onText) await onText([content]);
  return {
    content,
    toolCalls: (choice?.message?.tool_calls ?? [])
      .filter((c) => c.function?.name)
      .map((c, i) => ({ id: c.id || `call_drael_${i}`, type: 'function', function: { name: c.function!.name!, arguments: c.function!.arguments ?? '' } })),
    finishReason: choice?.finish_reason ?? null,
    usage: { prompt_tokens: completion.usage?.prompt_tokens ?? 0, completion_tokens: completion.usage?.completion_tokens ?? 0 },
  };
}
