import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import { ApiError } from '../errors/api-error.js';
import { upstreamFailure } from '../upstream/upstream.client.js';
import type { ChatToolCall } from './chat-message.js';

export interface ChatTurn {
  text: string;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number };
}

interface ChunkChoice {
  delta?: {
    content?: string | null;
    tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
  };
  finish_reason?: string | null;
}

/**
 * Reads one streamed chat completion from the upstream: text deltas are handed on as they come
 * (the client sees them live), tool-call fragments are joined by index, usage is taken from the
 * final chunk when the upstream sends one.
 */
export async function readChatStream(body: AsyncIterable<unknown>, onText: (delta: string) => void, signal: AbortSignal): Promise<ChatTurn> {
  const turn: ChatTurn = { text: '', toolCalls: [], finishReason: null, usage: { prompt_tokens: 0, completion_tokens: 0 } };
  const calls = new Map<number, ChatToolCall>();
  let failure: ApiError | undefined;
  const parser = createParser({
    onEvent(event) {
      if (event.data === '[DONE]' || failure) return;
      let chunk: { choices?: ChunkChoice[]; usage?: { prompt_tokens?: number; completion_tokens?: number } | null; error?: { message?: string } };
      try {
        chunk = JSON.parse(event.data) as typeof chunk;
      } catch {
        failure = new ApiError('upstream_error', 'The model upstream sent a malformed stream chunk');
        return;
      }
      if (chunk.error) {
        failure = new ApiError('upstream_error', `The model upstream failed mid-stream: ${chunk.error.message ?? 'unknown error'}`);
        return;
      }
      if (chunk.usage) {
        turn.usage = { prompt_tokens: chunk.usage.prompt_tokens ?? 0, completion_tokens: chunk.usage.completion_tokens ?? 0 };
      }
      const choice = chunk.choices?.[0];
      if (!choice) return;
      const content = choice.delta?.content;
      if (typeof content === 'string' && content.length > 0) {
        turn.text += content;
        onText(content);
      }
      for (const part of choice.delta?.tool_calls ?? []) {
        const index = part.index ?? 0;
        let call = calls.get(index);
        if (!call) {
          call = { id: part.id ?? `call_${index}`, type: 'function', function: { name: '', arguments: '' } };
          calls.set(index, call);
        }
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name += part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
      if (choice.finish_reason) turn.finishReason = choice.finish_reason;
    },
  });
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of body) {
      parser.feed(decoder.write(chunk as Buffer));
      if (failure) break;
    }
    parser.feed(decoder.end());
  } catch (err) {
    if (signal.aborted) throw err;
    throw upstreamFailure(err) ?? new ApiError('upstream_error', 'The model upstream stream failed');
  }
  if (failure) throw failure;
  turn.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
  return turn;
}
