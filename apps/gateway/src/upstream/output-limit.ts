import type { MaxTokensParam } from '../models/model-routes.config.js';

/**
 * A body's fields with the output token limit under the name a deployment takes (its
 * `max_tokens_param`): a limit given under the other name moves to it; given under both, the
 * deployment's own name keeps its value and the other goes. Without the setting, or with no limit
 * under the other name, `fields` itself comes back; it is never written to.
 */
export function withOutputLimitAs(fields: Readonly<Record<string, unknown>>, param: MaxTokensParam | undefined): Readonly<Record<string, unknown>> {
  if (param === undefined) return fields;
  const other = param === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
  if (!(other in fields)) return fields;
  // Copied without `other` rather than spread and deleted (a deleted key slows JSON.stringify, issue 20).
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) if (key !== other) out[key] = fields[key];
  if (out[param] == null && fields[other] != null) out[param] = fields[other];
  return out;
}
