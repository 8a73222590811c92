import { z } from 'zod';
import { COMMON_ERROR_CODES, subjectErrors } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { AccountIdSchema } from './billing.js';

/**
 * The Drael codes a failure of a model upstream is answered with: unreachable, no answer in time,
 * its 429 (Retry-After kept; distinct from the key's own rate_limit_exceeded), anything else. The
 * gateway's upstream/upstream-failure.ts translates every upstream failure onto this set
 * (`upstreamFailureCode`); on NATS nothing else of an upstream's passes.
 */
export const UPSTREAM_FAILURE_CODES = ['upstream_unreachable', 'upstream_timeout', 'upstream_error', 'upstream_rate_limited'] as const;
export type UpstreamFailureCode = (typeof UPSTREAM_FAILURE_CODES)[number];

/**
 * Codes only the gateway's HTTP surface answers with (its `ApiError`s: the body, the key, the
 * key's rate limit, routes): no NATS subject raises them.
 */
export const GATEWAY_HTTP_ONLY_ERROR_CODES = [
  'invalid_json',
  'invalid_request',
  'invalid_api_key',
  'missing_api_key',
  'rate_limit_exceeded',
  // The account has RUN_EVENT_STREAMS_PER_ACCOUNT run event streams open on this gateway replica: 429.
  'too_many_event_streams',
  'not_found',
  'service_unavailable',
] as const;

/** Every code the gateway itself raises, on HTTP or on its own subjects, beside every service's own. */
export const GATEWAY_ERROR_CODES = [...COMMON_ERROR_CODES, 'model_not_found', ...UPSTREAM_FAILURE_CODES, ...GATEWAY_HTTP_ONLY_ERROR_CODES] as const;
export type GatewayErrorCode = (typeof GATEWAY_ERROR_CODES)[number];
/** One gateway subject's codes: the common ones and those its handler can throw. */
const gatewayErrors = subjectErrors<GatewayErrorCode>();

/** One chat message on the inference subject: OpenAI's shape, passed through to the upstream as is. */
export const InferenceMessageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool']),
    content: z.string().nullable(),
    tool_calls: z.array(z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) })).optional(),
    tool_call_id: z.string().optional(),
  })
  .loose();
export type InferenceMessage = z.infer<typeof InferenceMessageSchema>;

export const InferenceToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()) }),
});

/**
 * A non-streamed chat completion on behalf of an account, through the same pipeline as the public
 * API (model routing, policy, account rate limit, usage). Agent runs make every model call here.
 */
export const InferenceChatRequestSchema = z.object({
  account_id: AccountIdSchema,
  model: z.string().min(1),
  messages: z.array(InferenceMessageSchema).min(1),
  tools: z.array(InferenceToolSchema).optional(),
  max_tokens: z.number().int().positive(),
  // Who is calling, for logs and usage records (e.g. an agent run and its step).
  origin: z.object({ kind: z.literal('agent_run'), run_id: z.string(), step: z.number().int().nonnegative() }).optional(),
});
export const InferenceChatReplySchema = z.object({
  model: z.string(),
  message: InferenceMessageSchema,
  finish_reason: z.string().nullable(),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }),
  // The model deployment that served the call (issue 24: as x-drael-upstream names it on HTTP; its
  // name, never its key or URL). Optional for one release, so an agent-run newer than its gateway
  // still reads the replies of the old one during a rolling update.
  deployment: z.string().min(1).optional(),
});
export type InferenceChatRequest = z.infer<typeof InferenceChatRequestSchema>;
export type InferenceChatReply = z.infer<typeof InferenceChatReplySchema>;

/**
 * The token naming one model alias on the wire (issue 19, item 3): a gateway answers
 * `gateway.inference.chat.v1.<token>` for each alias it serves (besides the plain subject), and
 * agent-run sends there, so a model call reaches only a gateway that serves its alias; with none,
 * NATS answers "no responders" at once (fail closed), never another gateway's `model_not_found`.
 * Letters, digits, `_` and `-` stay; every other byte (UTF-8) is `%XX`, so the mapping is one to
 * one and the token is always one valid NATS subject token.
 */
export function inferenceRouteToken(alias: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(alias)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Subjects the gateway answers over NATS (for example inference for agent runs). */
export const gatewayCatalog = {
  inferenceChat: defineEntry({
    subject: 'gateway.inference.chat.v1',
    service: 'gateway',
    request: InferenceChatRequestSchema,
    reply: InferenceChatReplySchema,
    // An unknown alias, and an upstream failure as the one translation gives it (never an
    // upstream's own code: agent-run acts on Drael's).
    errors: gatewayErrors('model_not_found', ...UPSTREAM_FAILURE_CODES),
    // A long completion from a slow upstream.
    timeoutMs: 180_000,
  }),
  /**
   * A key was revoked: every gateway replica drops it from its key cache, so its next request is
   * checked with billing and refused (without it, a replica kept admitting the key for up to
   * AUTH_CACHE_TTL_MS). Billing sends it once a revocation is committed. Delivered to EVERY replica
   * (a plain subscription, no queue group); each answers `{dropped}` (whether it held the key), and
   * the first answer is the caller's. No gateway running: NATS answers "no responders" at once.
   */
  forgetKey: defineEntry({
    subject: 'gateway.keys.forget.v1',
    service: 'gateway',
    delivery: 'every-replica',
    request: z.object({ key_id: z.string().min(1).max(64) }).strict(),
    reply: z.object({ key_id: z.string(), dropped: z.boolean() }),
    errors: gatewayErrors(),
    timeoutMs: 1_000,
  }),
} as const;
