import { z } from 'zod';
import { OpenAIErrorEnvelopeSchema } from '@drael/contracts';
import { DeploymentReportSchema } from '../upstream/deployment-report.schema.js';
import { TextFormatSchema } from '../responses/responses.schema.js';

/**
 * The bodies the gateway answers that no service contract already describes: OpenAI's own objects
 * (chat completion, response, model, list) and the gateway's probes. Written once here for the
 * OpenAPI document (openapi.document.ts); the gateway's integration tests validate every HTTP
 * response they receive against that document (packages/test-support openapi-check.ts), so a
 * field the code adds or drops without this file fails a test. OpenAI's objects are loose (a new
 * upstream field passes through, as the proxy passes it); Drael's own are exact.
 */

/** OpenAI's list object with its cursors (packages/contracts list-page.ts). */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ object: z.literal('list'), data: z.array(item), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });

/** A list without paging: every item at once. */
export const plainListOf = <T extends z.ZodType>(item: T) => z.object({ object: z.literal('list'), data: z.array(item) });

export const ModelObjectSchema = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() });

const UsageSchema = z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

/** A non-streamed chat completion (catalogue mode writes it; proxy mode passes the upstream's through). */
export const ChatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: UsageSchema.nullish(),
});

const ResponseUsageSchema = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ cached_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});

/** The Responses API `response` object (responses/response-object.ts), with the SDKs' `output_text`. */
export const ResponseObjectSchema = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number().int(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']),
  completed_at: z.number().int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  instructions: z.string().nullable(),
  max_output_tokens: z.number().int().nullable(),
  model: z.string(),
  output: z.array(z.looseObject({ type: z.string(), id: z.string() })),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  store: z.boolean(),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
  text: z.object({ format: TextFormatSchema }),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.null() }),
  tool_choice: z.unknown(),
  tools: z.array(z.unknown()),
  truncation: z.literal('disabled'),
  usage: ResponseUsageSchema.nullable(),
  metadata: z.record(z.string(), z.string()),
  user: z.string().optional(),
  safety_identifier: z.string().optional(),
  prompt_cache_key: z.string().optional(),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).optional(),
  output_text: z.string(),
});

export const InputItemResourceSchema = z.looseObject({ id: z.string(), type: z.string() });

export const DeletedSchema = (object: string) => z.object({ id: z.string(), object: z.literal(object), deleted: z.boolean() });

export const SessionObjectSchema = z.object({
  id: z.string(),
  object: z.literal('session'),
  bytes: z.number().int(),
  created_at: z.number().int(),
  last_used_at: z.number().int(),
});

export const SessionListSchema = listOf(SessionObjectSchema).extend({
  total: z.number().int(),
  max_sessions: z.number().int(),
  // Absent while an older sandbox answers.
  stored_bytes: z.number().int().optional(),
  max_stored_bytes: z.number().int().nullable().optional(),
});

export const FileListingSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ path: z.string(), size: z.number().int(), modified_at: z.string() })),
  // More files are in the session than `data` names (a listing names at most 2,000).
  has_more: z.boolean(),
  used_bytes: z.number().int(),
  quota_bytes: z.number().int(),
  free_bytes: z.number().int().optional(),
});

export const HealthzSchema = z.object({ status: z.literal('ok') });

const ReadinessFields = {
  nats: z.boolean(),
  key_verification: z.boolean(),
  services: z.record(z.string(), z.string()),
  /** With the admin token only: why each part that is down failed, in its own words. */
  unavailable: z.record(z.string(), z.string()).optional(),
  degraded: z.array(z.string()),
  /** `ok`, else why not (with the admin token) or `unavailable`. */
  redis: z.string(),
  failing: z.array(z.string()),
  /** With the admin token only: each model deployment's state and traffic counters. */
  deployments: z.record(z.string(), DeploymentReportSchema).optional(),
};

/** 200: ready (every backend up) or degraded (some down: their tools are out of the catalogue). */
export const ReadyzSchema = z.object({ status: z.enum(['ready', 'degraded']), ...ReadinessFields });
/** 503: not ready (NATS or key verification down), the error envelope with the same detail. */
export const NotReadySchema = z.object({ ...OpenAIErrorEnvelopeSchema.shape, status: z.literal('not_ready'), ...ReadinessFields });
