import { z } from 'zod';
import { baseEnvShape, databaseTimeoutsEnvShape, envInt } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
  // ?schema= names billing's own PostgreSQL schema (ARCHITECTURE: each service owns its data).
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL')
    .default('postgresql://postgres@127.0.0.1:5432/drael?schema=billing'),
  DATABASE_POOL_SIZE: envInt(1, 100).default(10),
  // Connect and statement timeouts (packages/config: databaseTimeoutsEnvShape).
  ...databaseTimeoutsEnvShape,
  // How often stale holds are expired (a crashed caller's hold returns to the allowance).
  BILLING_SWEEP_INTERVAL_MS: envInt(100, 600_000).default(5_000),
  // Request limits a new key gets when the creator names none (spec 04: per-minute and per-hour limits).
  BILLING_DEFAULT_PER_MINUTE: envInt(1, 1_000_000).default(60),
  BILLING_DEFAULT_PER_HOUR: envInt(1, 100_000_000).default(1_000),
  // Ed25519 key that signs agent steps' receipts and run ends (32-byte seed, hex) and its id, carried
  // in each receipt. Optional so an installation without hosted agents boots without it; with none,
  // agent steps cannot be settled (billing answers unavailable) and no agent run can bill a step.
  BILLING_RECEIPT_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  BILLING_RECEIPT_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/)
    .default('k1'),
});
export type BillingConfig = z.infer<typeof configSchema>;
export const BILLING_CONFIG = Symbol('BILLING_CONFIG');
