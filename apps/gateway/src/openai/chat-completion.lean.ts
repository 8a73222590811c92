import { ChatCompletionRequestSchema, type ChatCompletionRequest } from './chat-completion.schema.js';
import { caseVariantKeyOf, fieldsOf } from './validate.js';

// The fields a key may not be a case variant of (validate.ts caseVariantKeyOf).
const CHAT_FIELDS = fieldsOf(ChatCompletionRequestSchema);

/**
 * A hand-written check of the body that proxy mode forwards, for the hot path: true only when
 * ChatCompletionRequestSchema would certainly accept the body. Anything it is unsure of answers
 * false, and the caller then runs the zod parse, which accepts it or builds the 400 naming the bad
 * param, so every error message stays zod's. The zod parse (it copies every object it walks)
 * was a measured share of the gateway's per-request CPU (docs/decisions/0002-gateway-hot-path.md).
 * chat-completion.lean.spec.ts holds both to the same answers.
 */
export function isCertainlyValidChatRequest(body: unknown): body is ChatCompletionRequest {
  if (!isObject(body)) return false;
  const b = body;
  if (typeof b.model !== 'string' || b.model.length === 0) return false;
  const messages = b.messages;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  for (let i = 0; i < messages.length; i++) if (!isMessage(messages[i])) return false;
  if (!(b.stream == null || typeof b.stream === 'boolean')) return false;
  const so = b.stream_options;
  if (so != null && !(isObject(so) && (so.include_usage === undefined || typeof so.include_usage === 'boolean'))) return false;
  const tools = b.tools;
  if (tools != null) {
    if (!Array.isArray(tools)) return false;
    // The schema's union ends with { type: string }, so any object with a string type passes it.
    for (let i = 0; i < tools.length; i++) {
      const t: unknown = tools[i];
      if (!isObject(t) || typeof t.type !== 'string') return false;
    }
  }
  // A key the upstream may read as a field (`Model`): zod's path refuses it by name.
  if (caseVariantKeyOf(b, CHAT_FIELDS) !== undefined) return false;
  return (
    (b.n == null || (isInt(b.n) && b.n >= 1 && b.n <= 128)) &&
    (b.temperature == null || (isFiniteNumber(b.temperature) && b.temperature >= 0 && b.temperature <= 2)) &&
    (b.top_p == null || (isFiniteNumber(b.top_p) && b.top_p >= 0 && b.top_p <= 1)) &&
    (b.max_tokens == null || (isInt(b.max_tokens) && b.max_tokens > 0)) &&
    (b.max_completion_tokens == null || (isInt(b.max_completion_tokens) && b.max_completion_tokens > 0))
  );
}

function isMessage(m: unknown): boolean {
  if (!isObject(m)) return false;
  switch (m.role) {
    case 'system':
    case 'developer':
    case 'user':
      return isContent(m.content);
    case 'assistant':
      if (!(m.content == null || isContent(m.content))) return false;
      if (m.tool_calls == null) return true;
      if (!Array.isArray(m.tool_calls)) return false;
      for (const call of m.tool_calls as unknown[]) {
        if (!isObject(call) || typeof call.id !== 'string' || call.type !== 'function') return false;
        const fn = call.function;
        if (!isObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') return false;
      }
      return true;
    case 'tool':
      return isContent(m.content) && typeof m.tool_call_id === 'string';
    default:
      return false;
  }
}

function isContent(c: unknown): boolean {
  if (typeof c === 'string') return true;
  if (!Array.isArray(c)) return false;
  for (let i = 0; i < c.length; i++) {
    const part: unknown = c[i];
    if (!isObject(part) || typeof part.type !== 'string' || part.type.length === 0) return false;
  }
  return true;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v);
}
