import { IdempotencyKeySchema } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';

/**
 * The `Idempotency-Key` header (Stripe's semantics, kept by the service that owns the resource):
 * absent, or 1–255 characters. A longer one is refused, never cut (two keys cut alike would collide).
 */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  const key = header?.trim();
  if (!key) return undefined;
  const parsed = IdempotencyKeySchema.safeParse(key);
  if (!parsed.success) throw new ApiError('invalid_request', `Invalid Idempotency-Key: ${parsed.error.issues[0]?.message ?? 'invalid value'}`, 'Idempotency-Key');
  return parsed.data;
}
