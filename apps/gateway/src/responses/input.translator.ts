import { ApiError } from '../errors/api-error.js';
import type { ToolCall } from '../engine/turn-stream.reader.js';
import type { ChatContentPart, ChatMessage } from './chat-message.js';
import { HOSTED_FUNCTION } from './hosted/tool-names.js';
import type { ContentPart, FunctionTool, InputItem } from './responses.schema.js';

export interface TranslatedInput {
  messages: ChatMessage[];
  /** Definitions the client's own tool_search (execution: client) returned in tool_search_output items. */
  clientLoaded: FunctionTool[];
}

/**
 * Responses input → chat-completions messages. Function calls and their outputs become
 * assistant tool_calls and tool messages; a client-run tool_search becomes a call to the
 * `tool_search` function and its output the tool message carrying the loaded definitions.
 * Items replayed from an earlier output that the model does not need again are skipped.
 */
export function translateInput(input: string | readonly InputItem[] | undefined): TranslatedInput {
  const messages: ChatMessage[] = [];
  const clientLoaded: FunctionTool[] = [];
  if (input === undefined) return { messages, clientLoaded };
  if (typeof input === 'string') return { messages: [{ role: 'user', content: input }], clientLoaded };

  const pendingCall = (call: ToolCall) => {
    const last = messages.at(-1);
    if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
    else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
  };

  input.forEach((item, i) => {
    switch (item.type) {
      case 'function_call':
        pendingCall({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        return;
      case 'function_call_output':
        // The schema lets only text parts through here.
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: typeof item.output === 'string' ? item.output : textOf(item.output) });
        return;
      case 'tool_search_call':
        pendingCall({
          id: item.call_id,
          type: 'function',
          function: { name: HOSTED_FUNCTION.tool_search, arguments: JSON.stringify(item.arguments ?? {}) },
        });
        return;
      case 'tool_search_output': {
        const loaded: string[] = [];
        for (const t of item.tools) {
          if (t.type === 'function' && typeof t.name === 'string') {
            clientLoaded.push(t as unknown as FunctionTool);
            loaded.push(t.name);
          }
        }
        messages.push({ role: 'tool', tool_call_id: item.call_id, content: JSON.stringify({ ok: true, loaded_tools: loaded }) });
        return;
      }
      case 'web_search_call':
      case 'reasoning':
      case 'datetime_call':
      // Resolved before translation (item-references.ts): none is left here.
      case 'item_reference':
        return;
      case 'message':
      case undefined: {
        // The schema lets images and files through only in user messages.
        if (item.role === 'user' && typeof item.content !== 'string' && item.content.some(isMedia)) {
          messages.push({ role: 'user', content: item.content.map(chatPartOf) });
          return;
        }
        const content = typeof item.content === 'string' ? item.content : textOf(item.content);
        if (item.role === 'assistant') messages.push({ role: 'assistant', content });
        else messages.push({ role: item.role, content });
        return;
      }
      default:
        throw new ApiError('invalid_request', `Unsupported input item type`, `input[${i}].type`);
    }
  });
  return { messages, clientLoaded };
}

/** Text-only content, as one string (what every upstream reads); a refusal the client replays is its text. */
function textOf(parts: readonly ContentPart[]): string {
  return parts
    .map((p) => ('text' in p && typeof p.text === 'string' ? p.text : 'refusal' in p && typeof p.refusal === 'string' ? p.refusal : ''))
    .filter(Boolean)
    .join('\n');
}

const isMedia = (p: ContentPart): boolean => p.type === 'input_image' || p.type === 'input_file';

/** One Responses part as chat completions' part: input_image → image_url, input_file → file (the schema has refused file ids and URLs). */
function chatPartOf(p: ContentPart): ChatContentPart {
  switch (p.type) {
    case 'input_image':
      return { type: 'image_url', image_url: { url: p.image_url!, ...(p.detail ? { detail: p.detail } : {}) } };
    case 'input_file':
      return { type: 'file', file: { file_data: p.file_data!, filename: p.filename! } };
    case 'refusal':
      return { type: 'text', text: p.refusal };
    default:
      return { type: 'text', text: p.text };
  }
}
