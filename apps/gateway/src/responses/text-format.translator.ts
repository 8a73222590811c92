import type { ChatResponseFormat } from './chat-message.js';
import type { TextFormat } from './responses.schema.js';

/**
 * `text.format` (Responses) → `response_format` (chat completions): the same request in the
 * upstream's terms. A json_schema format's name, schema, strict and description move under
 * `json_schema`, as chat completions nests them.
 */
export function responseFormatOf(format: TextFormat): ChatResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
      ...(typeof format.description === 'string' ? { description: format.description } : {}),
    },
  };
}
