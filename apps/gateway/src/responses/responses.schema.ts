import { z } from 'zod';
import { FunctionNameSchema } from '../openai/chat-completion.schema.js';

/**
 * The Responses API request (spec 02) as Drael reads it. Objects are loose where OpenAI keeps
 * adding fields a client may send; the hosted tools are strict where the spec says what they
 * accept (web_fetch: only `type` and `engine`).
 */
const TextPartSchema = z.looseObject({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() });
const RefusalPartSchema = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
// Drael has no Files API, so a part that names a stored file (file_id) or asks Drael to download
// one (file_url) cannot be served: it is refused by name rather than dropped.
const NO_FILES_API = 'Drael has no Files API';
const InputImagePartSchema = z
  .looseObject({
    type: z.literal('input_image'),
    image_url: z.string().min(1).nullish(),
    file_id: z.string().nullish(),
    detail: z.enum(['low', 'high', 'auto']).nullish(),
  })
  .superRefine((part, ctx) => {
    if (part.file_id != null)
      ctx.addIssue({ code: 'custom', path: ['file_id'], message: `file_id is not served (${NO_FILES_API}); send the image as image_url, a URL or a data: URL` });
    else if (part.image_url == null) ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'an input_image needs image_url (a URL or a data: URL)' });
  });
const InputFilePartSchema = z
  .looseObject({
    type: z.literal('input_file'),
    file_data: z.string().min(1).nullish(),
    filename: z.string().min(1).nullish(),
    file_id: z.string().nullish(),
    file_url: z.string().nullish(),
  })
  .superRefine((part, ctx) => {
    if (part.file_id != null)
      ctx.addIssue({ code: 'custom', path: ['file_id'], message: `file_id is not served (${NO_FILES_API}); send the file inline as file_data with its filename` });
    else if (part.file_url != null) ctx.addIssue({ code: 'custom', path: ['file_url'], message: 'file_url is not served; send the file inline as file_data with its filename' });
    else if (part.file_data == null)
      ctx.addIssue({ code: 'custom', path: ['file_data'], message: 'an input_file needs file_data (the file as a base64 data: URL) and its filename' });
    else if (part.filename == null) ctx.addIssue({ code: 'custom', path: ['filename'], message: 'an input_file with file_data needs its filename' });
  });
const KnownPartSchema = z.discriminatedUnion('type', [TextPartSchema, RefusalPartSchema, InputImagePartSchema, InputFilePartSchema]);
const KNOWN_PART_TYPES: ReadonlySet<string> = new Set(['input_text', 'output_text', 'text', 'refusal', 'input_image', 'input_file']);
// Any other part type is a 400 naming it, never a part dropped unseen. It is a union member of its
// own (its type check aborts for a known type) so that zod reports this issue at the part's
// `type` rather than one "Invalid input" for the whole `input`.
const UnknownPartSchema = z
  .looseObject({ type: z.string().refine((t) => !KNOWN_PART_TYPES.has(t), { abort: true }) })
  .superRefine((part, ctx) => ctx.addIssue({ code: 'custom', path: ['type'], message: `content part type '${part.type}' is not served` }));
// Typed as the known parts: the member for the other types always fails, so whatever parses is a known part.
const ContentPartSchema = z.union([KnownPartSchema, UnknownPartSchema]) as unknown as typeof KnownPartSchema;
export type ContentPart = z.infer<typeof KnownPartSchema>;
const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

export const MessageItemSchema = z
  .looseObject({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: ContentSchema,
  })
  .superRefine((item, ctx) => {
    // Chat completions takes images and files only in user messages; elsewhere they would be refused upstream or lost.
    if (item.role === 'user' || typeof item.content === 'string') return;
    item.content.forEach((part, j) => {
      if (part.type === 'input_image' || part.type === 'input_file') {
        ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: `${part.type} is read only in user messages` });
      }
    });
  });
export const FunctionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
export const FunctionCallOutputItemSchema = z
  .looseObject({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(ContentPartSchema)]),
  })
  .superRefine((item, ctx) => {
    // A tool message reaches the model as text: an image or file in a function's output would be lost.
    if (typeof item.output === 'string') return;
    item.output.forEach((part, j) => {
      if (part.type === 'input_image' || part.type === 'input_file') {
        ctx.addIssue({ code: 'custom', path: ['output', j, 'type'], message: `${part.type} is not served in a function_call_output: a tool's output reaches the model as text` });
      }
    });
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
/**
 * Items a client may replay from an earlier output; they carry nothing the model needs again. An
 * `item_reference` names an earlier output item, read in its place (item-references.ts).
 */
const ReplayedItemSchema = z.looseObject({ type: z.enum(['web_search_call', 'reasoning', 'datetime_call', 'item_reference']) });

// Told apart by `type` (a message may leave it out), so a bad item is refused naming its bad field.
export const InputItemSchema = z.discriminatedUnion('type', [
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

/**
 * `text.format`, the shape the answer must take (structured outputs). It reaches the upstream as
 * chat completions' `response_format` (text-format.translator.ts) and comes back in the response's `text`.
 */
export const TextFormatSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    // OpenAI's rule for the format's name.
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'the format name must match ^[A-Za-z0-9_-]{1,64}$'),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
    description: z.string().nullish(),
  }),
]);
export type TextFormat = z.infer<typeof TextFormatSchema>;

/** `reasoning`: its effort reaches the upstream as chat completions' `reasoning_effort`. */
const ReasoningSchema = z.looseObject({
  effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
  summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
});

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
  // OpenAI's bounds: at most 16 pairs, keys of 64 characters, values of 512.
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'metadata holds at most 16 key-value pairs')
    .nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  // Who the end user is and how to cache and serve the request: chat completions takes the same
  // fields, and each upstream turn gets them (ResponseRun.forwarded). OpenAI's bounds.
  user: z.string().max(256).nullish(),
  safety_identifier: z.string().max(64).nullish(),
  prompt_cache_key: z.string().max(1024).nullish(),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  // Drael never drops input to make it fit (a request over the model's context fails typed), so
  // the response always says `disabled`; a value OpenAI does not have is refused, not ignored.
  truncation: z.enum(['auto', 'disabled']).nullish(),
  text: z.looseObject({ format: TextFormatSchema.nullish() }).nullish(),
  reasoning: ReasoningSchema.nullish(),
  // Conversations objects are not served: a request that names one would otherwise be answered
  // without its context; previous_response_id is how a conversation goes on here.
  conversation: z
    .union([z.string(), z.looseObject({ id: z.string() })])
    .nullish()
    .refine((c) => c == null, 'conversations are not supported: continue a conversation with previous_response_id, or send the whole input'),
  // Every response is made in the foreground (POST answers with it, or streams it): a client that
  // asks for a background one (to poll or cancel it later) is told so rather than surprised.
  background: z
    .boolean()
    .nullish()
    .refine((b) => b !== true, 'background responses are not supported: each response is made in the foreground; leave background unset or false'),
});
export type CreateResponseRequest = z.infer<typeof CreateResponseSchema>;

/**
 * GET /v1/responses/{id}'s query. OpenAI streams a background response's events again with
 * `stream=true`; Drael makes every response in the foreground and keeps only the finished object,
 * so there is no stream to replay, and saying so beats an empty stream.
 */
export const RetrieveResponseQuerySchema = z.looseObject({
  stream: z
    .enum(['true', 'false'])
    .optional()
    .refine(
      (s) => s !== 'true',
      'streaming a stored response is not supported: responses are made in the foreground and only the finished response is kept; GET it without stream',
    ),
});
