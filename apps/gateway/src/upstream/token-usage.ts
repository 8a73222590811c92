/**
 * Token counts as an upstream reports them, trusted only as far as they are counts: every figure
 * built on them (a key's usage and bill, a deployment's tpm window, the request's cost ceiling,
 * the Prometheus counters) adds them up, so a string would concatenate, a negative number would
 * take tokens back and 1e300 would end every limit.
 */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A whole number of tokens a counter can add: a non-negative safe integer. */
export function isTokenCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** An answer's `usage` as counts: a field that is not a count is 0 (the answer is still served). */
export function tokenUsageOf(usage: unknown): TokenUsage {
  const u = (typeof usage === 'object' && usage !== null ? usage : {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return { prompt_tokens: isTokenCount(u.prompt_tokens) ? u.prompt_tokens : 0, completion_tokens: isTokenCount(u.completion_tokens) ? u.completion_tokens : 0 };
}
