import { newId } from './response-object.js';
import type { InputItem } from './responses.schema.js';

/** One input item as GET /v1/responses/{id}/input_items lists it: the request's item, with an id. */
export type InputItemResource = { id: string; type: string } & Record<string, unknown>;

// OpenAI's id prefixes per item type; any other type gets a generic one.
const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', tool_search_call: 'tsc', tool_search_output: 'tso' };

/**
 * The request's `input` as the items OpenAI lists for it, in the order sent: a plain string is one
 * user message; message content given as a string becomes one text part; every item keeps its
 * own id or gets one. Items are stored with the response, so they list exactly what was sent.
 */
export function inputItemsOf(input: string | readonly InputItem[] | undefined): InputItemResource[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [messageItem('user', input)];
  return input.map((item) => {
    const type = item.type ?? 'message';
    if (type === 'message' && 'role' in item && typeof item.content === 'string') {
      return { ...messageItem(item.role as string, item.content), ...(typeof item.id === 'string' ? { id: item.id } : {}) };
    }
    const id = typeof item.id === 'string' && item.id.length > 0 ? item.id : newId(ID_PREFIX[type] ?? 'item');
    return { ...item, id, type, ...(type === 'message' && item.status === undefined ? { status: 'completed' } : {}) };
  });
}

function messageItem(role: string, text: string): InputItemResource {
  const part = role === 'assistant' ? { type: 'output_text', text, annotations: [] } : { type: 'input_text', text };
  return { id: newId('msg'), type: 'message', role, status: 'completed', content: [part] };
}
