import type { BillingErrorCode } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { recordRefusal } from './billing.metrics.js';

/** A typed failure of this service: its code is one of billing's declared codes. */
export class BillingError extends RpcError<BillingErrorCode> {}

/** A billing failure a caller cannot fix by retrying (counted by reason); it crosses NATS as `{code, message, retryable, details}`. */
export function billingError(code: BillingErrorCode, message: string, details?: Record<string, unknown>): BillingError {
  recordRefusal(code);
  return new BillingError(code, message, false, details);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are UUIDs in the database; anything else cannot name a row (and must not reach a uuid cast). */
export function isUuid(s: string): boolean {
  return UUID.test(s);
}
