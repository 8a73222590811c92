import { storedText } from './stored-text.js';

/** An `Idempotency-Key` (Stripe's semantics): up to 255 characters, per account. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;
export const IdempotencyKeySchema = storedText(1, MAX_IDEMPOTENCY_KEY_CHARS);

/** JSON with object keys sorted at every level, so two equal requests give the same bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * What an idempotency key is bound to: the method, the target (the resource the request acts on)
 * and the canonical body. A service stores its sha256 with the key; the key used again with a
 * different request is `idempotency_key_reused` (409), with the same one it answers the first result.
 */
export function idempotencyRequest(method: string, target: string, body: unknown): string {
  return `${method.toUpperCase()} ${target}\n${canonicalJson(body)}`;
}
