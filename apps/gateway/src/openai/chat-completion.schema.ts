import { z } from 'zod';

/**
 * The parts of an OpenAI chat-completions request the gateway reads. Objects are loose: any
 * field not named here (new OpenAI parameters, vendor extensions) passes through to the upstream.
 */
const ContentPartSchema = z.looseObject({ type: z.string().min(1) });

export const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/**
 * A call of a client's custom tool (`tools: [{type: "custom"}]`, free-form input): OpenAI's other
 * kind of tool call. The client sends it back in its history; Drael never makes one itself.
 */
const CustomToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('custom'),
  custom: z.looseObject({ name: z.string(), input: z.string() }),
});
const AssistantToolCallSchema = z.discriminatedUnion('type', [ToolCallSchema, CustomToolCallSchema]);

export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: z.union([z.string(), z.array(ContentPartSchema)]) }),
  z.looseObject({ role: z.literal('developer'), content: z.union([z.string(), z.array(ContentPartSchema)]) }),
  z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(ContentPartSchema)]) }),
  z.looseObject({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(ContentPartSchema)]).nullish(),
    // null as well as absent: openai-python's `message.model_dump()`, how Python apps keep history, writes `"tool_calls": null`.
    tool_calls: z.array(AssistantToolCallSchema).nullish(),
  }),
  z.looseObject({ role: z.literal('tool'), content: z.union([z.string(), z.array(ContentPartSchema)]), tool_call_id: z.string() }),
  // The legacy function-calling result (with `functions` / `function_call`): proxied as is.
  z.looseObject({ role: z.literal('function'), name: z.string(), content: z.string().nullable() }),
]);

// OpenAI's rule for a function name (chat tools and Responses function tools alike).
export const FunctionNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'function name must match ^[A-Za-z0-9_-]{1,64}$');

export const FunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: FunctionNameSchema,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

export const ChatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  // null is "not given", as OpenAI reads it: no client tools.
  tools: z.array(z.union([FunctionToolSchema, z.looseObject({ type: z.string() })])).nullish(),
  // The legacy form of client tools: their presence alone makes the request the client's loop.
  functions: z.array(z.unknown()).nullish(),
  function_call: z.unknown().optional(),
  // Read by the mode decision (`"none"`: a plain completion); declared so that a case variant of it is refused (validate.ts).
  tool_choice: z.unknown().optional(),
  n: z.number().int().min(1).max(128).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;
