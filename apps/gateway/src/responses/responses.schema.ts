import { z } from 'zod';
import { FunctionNameSchema } from '../openai/chat-completion.schema.js';

/**
 * The Responses API request (spec 02) as Drael reads it. Objects are loose where OpenAI keeps
 * adding fields a client may send; the hosted tools are strict where the spec says what they
 * accept (web_fetch: only `type` and `engine`).
 */
const TextPartSchema = z.looseObject({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() });
const OtherPartSchema = z.looseObject({ type: z.string().min(1) });
const ContentSchema = z.union([z.string(), z.array(z.union([TextPartSchema, OtherPartSchema]))]);

export const MessageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: ContentSchema,
});
export const FunctionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export const FunctionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(OtherPartSchema)]),
});
export const ToolSearchCallItemSchema = z.looseObject({
  type: z.literal('tool_search_call'),
  call_id: z.string().min(1),
  arguments: z.unknown().optional(),
});
export const ToolSearchOutputItemSchema = z.looseObject({
  type: z.literal('tool_search_output'),
  call_id: z.string().min(1),
  tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })),
});
/** Items a client may replay from an earlier output; they carry nothing the model needs again. */
const ReplayedItemSchema = z.looseObject({ type: z.enum(['web_search_call', 'reasoning', 'datetime_call', 'item_reference']) });

export const InputItemSchema = z.union([
  FunctionCallItemSchema,
  FunctionCallOutputItemSchema,
  ToolSearchCallItemSchema,
  ToolSearchOutputItemSchema,
  ReplayedItemSchema,
  MessageItemSchema,
]);
export type InputItem = z.infer<typeof InputItemSchema>;

export const FunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: FunctionNameSchema,
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
  defer_loading: z.boolean().optional(),
});
export type FunctionTool = z.infer<typeof FunctionToolSchema>;

export const WebSearchToolSchema = z.object({
  type: z.enum(['web_search', 'web_search_preview']),
  engine: z.string().min(1).default('auto'),
  filters: z.object({ allowed_domains: z.array(z.string().min(1).max(253)).max(100).optional() }).nullish(),
  search_context_size: z.enum(['low', 'medium', 'high']).default('medium'),
  user_location: z.unknown().optional(),
});
export type WebSearchTool = z.infer<typeof WebSearchToolSchema>;

// spec 02: web_fetch accepts only type and engine; filters come from the web_search declaration.
export const WebFetchToolSchema = z.strictObject({ type: z.literal('web_fetch'), engine: z.string().min(1).default('auto') });
export type WebFetchTool = z.infer<typeof WebFetchToolSchema>;

export const ToolSearchToolSchema = z.strictObject({
  type: z.literal('tool_search'),
  execution: z.enum(['server', 'client']).default('server'),
  description: z.string().optional(),
});
export type ToolSearchTool = z.infer<typeof ToolSearchToolSchema>;

export const DatetimeToolSchema = z.strictObject({ type: z.literal('datetime'), timezone: z.string().min(1).default('UTC') });
export type DatetimeTool = z.infer<typeof DatetimeToolSchema>;

export const ToolSchema = z.discriminatedUnion('type', [FunctionToolSchema, WebSearchToolSchema, WebFetchToolSchema, ToolSearchToolSchema, DatetimeToolSchema]);
export type ResponseTool = z.infer<typeof ToolSchema>;

export const ToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
  z.looseObject({ type: z.enum(['web_search', 'web_search_preview', 'web_fetch', 'tool_search', 'datetime']) }),
]);
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;

export const INCLUDE_SOURCES = 'web_search_call.action.sources';

export const CreateResponseSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(InputItemSchema)]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(ToolSchema).max(128).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  // Unknown include values are accepted and ignored, as OpenAI adds new ones often.
  include: z.array(z.string()).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  previous_response_id: z.string().min(1).max(200).nullish(),
  store: z.boolean().nullish(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  // Every response is made in the foreground (POST answers with it, or streams it): a client that
  // asks for a background one (to poll or cancel it later) is told so rather than surprised.
  background: z
    .boolean()
    .nullish()
    .refine((b) => b !== true, 'background responses are not supported: each response is made in the foreground; leave background unset or false'),
});
export type CreateResponseRequest = z.infer<typeof CreateResponseSchema>;
