import { z } from 'zod';
import { baseEnvShape, databaseTimeoutsEnvShape, envInt } from '@drael/config';
import { MAX_RECEIPT_KEYS } from '@drael/contracts';

/** A receipt key's id: carried in every receipt and run end, and how verifiers pick its key. */
const RECEIPT_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

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
  BILLING_RECEIPT_KEY_ID: z.string().regex(RECEIPT_KEY_ID, 'must be 1-32 letters, digits, _ or -').default('k1'),
  // Public keys that verify receipts without signing any more: "id:hex,id2:hex" (64 hex digits,
  // Ed25519). A rotation publishes the next key here on every replica first, then makes it the
  // signer and moves the old one here, so every receipt of every run stays verifiable (k8s/README).
  BILLING_RECEIPT_VERIFY_KEYS: z
    .string()
    .default('')
    .transform((s, ctx) => {
      const keys: Array<{ key_id: string; public_key: string }> = [];
      for (const item of s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '')) {
        const [id, hex, ...rest] = item.split(':');
        if (id === undefined || hex === undefined || rest.length > 0 || !RECEIPT_KEY_ID.test(id) || !/^[0-9a-fA-F]{64}$/.test(hex)) {
          ctx.addIssue({ code: 'custom', message: `"${item.slice(0, 80)}" is not id:hex (an id of 1-32 letters, digits, _ or -; 64 hex digits)` });
          return z.NEVER;
        }
        if (keys.some((k) => k.key_id === id)) {
          ctx.addIssue({ code: 'custom', message: `key id ${id} is listed twice` });
          return z.NEVER;
        }
        keys.push({ key_id: id, public_key: hex.toLowerCase() });
      }
      // The signing key is published beside these, and verifiers take at most MAX_RECEIPT_KEYS.
      if (keys.length > MAX_RECEIPT_KEYS - 1) {
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_RECEIPT_KEYS - 1} keys (retire the oldest only when no receipt under it must verify)` });
        return z.NEVER;
      }
      return keys;
    }),
});
export type BillingConfig = z.infer<typeof configSchema>;
export const BILLING_CONFIG = Symbol('BILLING_CONFIG');
