import type { ToolCall } from '../engine/turn-stream.reader.js';

/** The chat-completions shapes the Responses loop sends to the upstream (Responses is translated onto them). */

/** A user message's part in chat completions: text, an image (a URL or a data: URL), or an inline file. */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'low' | 'high' | 'auto' } }
  | { type: 'file'; file: { file_data: string; filename: string } };

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

/** Chat completions' `response_format`: what `text.format` asks of the answer, in the upstream's terms. */
export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string } };

/**
 * Appends a conversation's messages one by one. Not `push(...from)`: a spread passes each message
 * as an argument, and past about 125,000 of them (an `input` of 3 MB, or a long stored
 * conversation continued) V8 throws RangeError, which was a 500.
 */
export function appendMessages(into: ChatMessage[], from: readonly ChatMessage[]): void {
  for (const message of from) into.push(message);
}
