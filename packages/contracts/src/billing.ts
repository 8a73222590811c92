import { z } from 'zod';
import { COMMON_ERROR_CODES, subjectErrors } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';
import { storedText } from './stored-text.js';
import { IdempotencyKeySchema } from './idempotency.js';

export const BILLING_ERROR_CODES = [
  ...COMMON_ERROR_CODES,
  'invalid_api_key',
  'account_not_found',
  'key_not_found',
  'plan_not_found',
  'plan_required',
  'weekly_allowance_reached',
  'daily_ceiling_reached',
  'hold_not_found',
  'hold_already_resolved',
  'idempotency_conflict',
  // The same Idempotency-Key with a different request (body or target): 409, nothing done.
  'idempotency_key_reused',
  // agent steps (spec 03: the account's balance, monthly budget and rate limit apply)
  'insufficient_balance',
  'monthly_budget_reached',
  'agent_rate_limited',
  'receipt_chain_mismatch',
] as const;
export type BillingErrorCode = (typeof BILLING_ERROR_CODES)[number];
/** One billing subject's codes: the common ones and those its handler can throw. */
const billingErrors = subjectErrors<BillingErrorCode>();

/** spec 04: a key's tool level. Each level includes the ones before it. */
export const TOOL_LEVELS = ['none', 'l1_http', 'l3_shell', 'l4_browser'] as const;
export const ToolLevelSchema = z.enum(TOOL_LEVELS);
export type ToolLevel = z.infer<typeof ToolLevelSchema>;

/** True when `level` is at least `min` in the order none < l1_http < l3_shell < l4_browser. The one order of levels. */
export function levelAtLeast(level: ToolLevel, min: ToolLevel): boolean {
  return TOOL_LEVELS.indexOf(level) >= TOOL_LEVELS.indexOf(min);
}

/** The tools that cost something (spec 01: run_code, web_search and web_fetch are free and never held). */
export const PAID_TOOLS = ['generate_image', 'breach_lookup', 'contact_lookup'] as const;
export const PaidToolSchema = z.enum(PAID_TOOLS);
export type PaidTool = z.infer<typeof PaidToolSchema>;

/** Which weekly allowance a paid tool counts against. */
export const METERS = ['images', 'lookups'] as const;
export type Meter = (typeof METERS)[number];
export const TOOL_METER: Record<PaidTool, Meter> = {
  generate_image: 'images',
  breach_lookup: 'lookups',
  contact_lookup: 'lookups',
};

/** spec 01: a contact lookup is metered per contact returned, a premium contact counting double. */
export function contactLookupUnits(contacts: { plain: number; premium: number }): number {
  return contacts.plain + 2 * contacts.premium;
}

export const AccountIdSchema = storedText(1, 64);

// Bounds of what billing's columns hold (PostgreSQL int4 tops out at 2^31-1): a larger number is a
// 400 naming the field, never an integer overflow in the database.
export const MAX_KEY_PER_MINUTE = 1_000_000;
export const MAX_KEY_PER_HOUR = 100_000_000;
export const MAX_DAILY_CEILING = 1_000_000;
export const MAX_WALLET_MICROS = 1_000_000_000_000;

/** A key's request rate limit, as stored with the key. */
export const KeyRateLimitSchema = z
  .object({ per_minute: z.number().int().positive().max(MAX_KEY_PER_MINUTE), per_hour: z.number().int().positive().max(MAX_KEY_PER_HOUR) })
  .strict();
/**
 * An operator's key (admin API, billing CLI) never gets a per-hour limit below 60 x its per-minute
 * one without asking: that would cap the key below its own per-minute rate without saying so
 * (issue 15: `--per-minute 2000` once meant 1,000 an hour). Left out, per_hour is derived; given
 * smaller, it is refused naming it. The internal subject keeps taking any pair (tests need a small
 * hourly window), so the rule lives here, once, for both operator surfaces.
 */
export const derivedPerHour = (perMinute: number): number => 60 * perMinute;
export function perHourProblem(perMinute: number, perHour: number): string | undefined {
  const min = derivedPerHour(perMinute);
  return perHour < min ? `per_hour ${perHour} is below 60 x per_minute ${perMinute} (= ${min}): the key could never use its per-minute rate` : undefined;
}
/** The limits an operator asks for: per_hour optional (60 x per_minute), never below that. */
export const OperatorKeyRateLimitSchema = z
  .object({ per_minute: KeyRateLimitSchema.shape.per_minute, per_hour: KeyRateLimitSchema.shape.per_hour.optional() })
  .strict()
  .superRefine((r, ctx) => {
    const problem = r.per_hour === undefined ? undefined : perHourProblem(r.per_minute, r.per_hour);
    if (problem) ctx.addIssue({ code: 'custom', path: ['per_hour'], message: `${problem}; raise per_hour or leave it out` });
  })
  .transform((r) => ({ per_minute: r.per_minute, per_hour: r.per_hour ?? derivedPerHour(r.per_minute) }));

/** Extra usage past the weekly allowance, bounded per UTC day. */
export const ExtraUsageSchema = z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative().max(MAX_DAILY_CEILING) }).strict();
export const AccountNameSchema = storedText(1, 200);
export const PlanNameSchema = storedText(1, 64);
export const KeyNameSchema = storedText(0, 200);

/**
 * When a key stops working: an RFC 3339 time with `Z` or an offset, in the future when the key is
 * made. No expiry: the key works until it is revoked.
 */
export const KeyExpirySchema = z.iso.datetime({ offset: true }).max(64);

/**
 * A key's expiry as billing answers it (UTC, milliseconds), or null for none. Absent is read as null:
 * a billing from before expiries answers without it.
 */
const KeyExpiryReplySchema = z.string().nullable().default(null);

export const KeyIdentitySchema = z.object({
  account_id: AccountIdSchema,
  key_id: z.string(),
  tool_level: ToolLevelSchema,
  rate_limit: z.object({ per_minute: z.number().int().positive(), per_hour: z.number().int().positive() }),
  plan: z.string(),
  /** The gateway keeps a verified key no longer than this. */
  expires_at: KeyExpiryReplySchema,
});
export type KeyIdentity = z.infer<typeof KeyIdentitySchema>;

export const PlanSchema = z.object({
  id: z.string(),
  name: z.string(),
  price_usd_per_month: z.number().nonnegative(),
  weekly: z.object({ images: z.number().int().nonnegative(), lookups: z.number().int().nonnegative() }),
  tools: z.array(PaidToolSchema),
});
export type Plan = z.infer<typeof PlanSchema>;

export const HoldSchema = z.object({
  hold_id: z.string(),
  account_id: AccountIdSchema,
  tool: PaidToolSchema,
  units: z.number().int().nonnegative(),
  /** Of `units`, how many count against the weekly allowance; the rest (`extra_units`) are extra usage. */
  plan_units: z.number().int().nonnegative(),
  status: z.enum(['held', 'settled', 'released', 'expired']),
  settled_units: z.number().int().nonnegative().nullable(),
  extra_units: z.number().int().nonnegative(),
  expires_at: z.string(),
});
export type Hold = z.infer<typeof HoldSchema>;

export const UsageSchema = z.object({
  account_id: AccountIdSchema,
  plan: z.string(),
  week_start: z.string(),
  allowances: z.object({
    images: z.object({ allowance: z.number().int(), used: z.number().int(), held: z.number().int(), extra: z.number().int() }),
    lookups: z.object({ allowance: z.number().int(), used: z.number().int(), held: z.number().int(), extra: z.number().int() }),
  }),
  extra_usage: z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative(), used_today: z.number().int() }),
  /** Agent steps' money: the prepaid balance and this calendar month's spend (spec 03). */
  agent_spend: z.object({
    balance_usd: z.number(),
    held_usd: z.number(),
    monthly_budget_usd: z.number().nullable(),
    month_start: z.string(),
    spent_this_month_usd: z.number(),
    steps_per_minute: z.number().int(),
  }),
});
export type Usage = z.infer<typeof UsageSchema>;

/** An account as the operator's listing shows it. */
export const AccountSummarySchema = z.object({
  account_id: AccountIdSchema,
  name: z.string(),
  plan: z.string(),
  extra_usage: z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() }),
  created_at: z.string(),
});
export type AccountSummary = z.infer<typeof AccountSummarySchema>;

/** A key as listings show it: never the key itself (billing keeps only its hash), only its hint. */
export const KeySummarySchema = z.object({
  key_id: z.string(),
  name: z.string().nullable(),
  hint: z.string(),
  tool_level: ToolLevelSchema,
  rate_limit: z.object({ per_minute: z.number().int().positive(), per_hour: z.number().int().positive() }),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  expires_at: KeyExpiryReplySchema,
});
export type KeySummary = z.infer<typeof KeySummarySchema>;

/** One UTC day of an account's billed operations (the console's 30-day chart). */
export const UsageDaySchema = z.object({
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  /** Paid tool calls that were charged (settled holds), and their units per meter. */
  tool_calls: z.number().int().nonnegative(),
  units: z.object({ images: z.number().int().nonnegative(), lookups: z.number().int().nonnegative() }),
  /** Agent operations that were charged (settled spend holds), and what they cost. */
  agent_steps: z.number().int().nonnegative(),
  spend_usd: z.number().nonnegative(),
  /** Billed requests of the day: tool_calls + agent_steps (free calls are not billed, so not counted). */
  requests: z.number().int().nonnegative(),
});
export type UsageDay = z.infer<typeof UsageDaySchema>;

/** Kinds of billed agent steps. */
export const STEP_KINDS = ['inference.chat', 'sandbox.execute'] as const;
export const StepKindSchema = z.enum(STEP_KINDS);
export type StepKind = z.infer<typeof StepKindSchema>;

const Hex32 = z.string().regex(/^[0-9a-f]{64}$/);
const Hex64 = z.string().regex(/^[0-9a-f]{128}$/);
const Micros = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** PostgreSQL's int4, the type of unit, sequence and counter columns: a larger number is a 400 naming the field, never an overflow in the database. */
export const MAX_INT4 = 2_147_483_647;

/**
 * A receipt's usage as a settle may write it: a few named figures (model, tokens, exit code). It is
 * signed, stored and sent back with every read of the run's receipts, so it is bounded where it
 * comes in: at most 32 entries, names of 1-64 and text of at most 1,024 characters PostgreSQL can store.
 */
const ReceiptUsageInput = z
  .record(storedText(1, 64), z.union([z.number(), storedText(0, 1024), z.null()]))
  .refine((usage) => Object.keys(usage).length <= 32, { message: 'at most 32 usage entries' });

/** The signed part of a receipt. Its keccak256 over the JCS (RFC 8785) bytes is the receipt hash. */
export const ReceiptPayloadSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  issued_at: z.string(),
  account_id: AccountIdSchema,
  kind: StepKindSchema,
  cost_micros: z.number().int().nonnegative(),
  usage: z.record(z.string(), z.union([z.number(), z.string(), z.null()])),
  input_fingerprint: Hex32,
  output_fingerprint: Hex32,
  run: z.object({ id: z.string(), sequence: z.number().int().nonnegative(), previous_receipt_hash: Hex32.nullable() }),
});
export type ReceiptPayload = z.infer<typeof ReceiptPayloadSchema>;

export const ReceiptSchema = z.object({ payload: ReceiptPayloadSchema, hash: Hex32, key_id: z.string(), signature: Hex64 });
export type Receipt = z.infer<typeof ReceiptSchema>;

/** Signed at the end of a run, so a receipt chain cut short is caught too. */
export const RunEndPayloadSchema = z.object({
  version: z.literal(1),
  type: z.literal('run_end'),
  run_id: z.string(),
  receipt_count: z.number().int().nonnegative(),
  receipt_head: Hex32,
});
export const RunEndSchema = z.object({ payload: RunEndPayloadSchema, key_id: z.string(), signature: Hex64 });
export type RunEnd = z.infer<typeof RunEndSchema>;

export const ReceiptKeySchema = z.object({ key_id: z.string(), public_key: Hex32, algorithm: z.literal('ed25519') });
export type ReceiptKey = z.infer<typeof ReceiptKeySchema>;

/** How many receipt keys billing publishes at most: the signing key and those still verifying. */
export const MAX_RECEIPT_KEYS = 16;

/**
 * Billing's published receipt keys. The top-level fields are the key that signs now (as before the
 * set existed); `keys` holds every key a receipt or run end may carry, the signing one included: a
 * key retired by a rotation, and one published ahead of becoming the signer. A verifier picks each
 * signature's key by its `key_id`, so a chain signed across a rotation (replicas of both keys
 * signing during a rollout) verifies, and so do every run's receipts after it.
 */
export const ReceiptKeySetSchema = ReceiptKeySchema.extend({ keys: z.array(ReceiptKeySchema).min(1).max(MAX_RECEIPT_KEYS) });
export type ReceiptKeySet = z.infer<typeof ReceiptKeySetSchema>;

/** An account's money for agent steps, in micro-dollars. */
export const WalletSchema = z.object({
  account_id: AccountIdSchema,
  balance_micros: Micros,
  held_micros: Micros,
  available_micros: Micros,
  monthly_budget_micros: Micros.nullable(),
  month_start: z.string(),
  spent_this_month_micros: Micros,
  held_this_month_micros: Micros,
  agent_steps_per_minute: z.number().int().positive(),
});
export type Wallet = z.infer<typeof WalletSchema>;

/** A cash hold for one agent operation (model call or sandbox execution): reserve → settle | release | expire. */
export const SpendHoldSchema = z.object({
  hold_id: z.string(),
  account_id: AccountIdSchema,
  run_id: z.string(),
  kind: StepKindSchema,
  amount_micros: Micros,
  status: z.enum(['held', 'settled', 'released', 'expired']),
  settled_micros: Micros.nullable(),
  expires_at: z.string(),
});
export type SpendHold = z.infer<typeof SpendHoldSchema>;

export const billingCatalog = {
  health: healthEntry('billing'),
  verifyKey: defineEntry({
    subject: 'billing.keys.verify.v1',
    service: 'billing',
    request: z.object({ api_key: z.string().min(1).max(256) }),
    reply: KeyIdentitySchema,
    errors: billingErrors('invalid_api_key'),
    timeoutMs: 2_000,
  }),
  createAccount: defineEntry({
    subject: 'billing.accounts.create.v1',
    service: 'billing',
    request: z
      .object({
        name: AccountNameSchema,
        plan: PlanNameSchema.default('free'),
        extra_usage: ExtraUsageSchema.optional(),
      })
      .strict(),
    reply: z.object({ account_id: AccountIdSchema, name: z.string(), plan: z.string() }),
    errors: billingErrors('plan_not_found'),
    timeoutMs: 5_000,
  }),
  listAccounts: defineEntry({
    subject: 'billing.accounts.list.v1',
    service: 'billing',
    // Newest first; `before` is the last account_id of the previous page.
    request: z.object({ limit: z.number().int().min(1).max(100).default(50), before: AccountIdSchema.optional() }),
    reply: z.object({ accounts: z.array(AccountSummarySchema), has_more: z.boolean() }),
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  listKeys: defineEntry({
    subject: 'billing.keys.list.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema }),
    reply: z.object({ keys: z.array(KeySummarySchema) }),
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  createKey: defineEntry({
    subject: 'billing.keys.create.v1',
    service: 'billing',
    request: z
      .object({
        account_id: AccountIdSchema,
        name: KeyNameSchema.optional(),
        tool_level: ToolLevelSchema.default('l3_shell'),
        rate_limit: KeyRateLimitSchema.optional(),
        expires_at: KeyExpirySchema.optional(),
      })
      .strict(),
    // The secret appears here once and is never stored or returned again.
    reply: z.object({
      key_id: z.string(),
      api_key: z.string().startsWith('drael_'),
      account_id: AccountIdSchema,
      tool_level: ToolLevelSchema,
      expires_at: KeyExpiryReplySchema,
    }),
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  revokeKey: defineEntry({
    subject: 'billing.keys.revoke.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, key_id: storedText(1, 64) }),
    reply: z.object({ key_id: z.string(), revoked: z.boolean() }),
    errors: billingErrors('key_not_found'),
    timeoutMs: 5_000,
  }),
  setExtraUsage: defineEntry({
    subject: 'billing.accounts.extra-usage.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, ...ExtraUsageSchema.shape }).strict(),
    reply: z.object({ account_id: AccountIdSchema, enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() }),
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  listPlans: defineEntry({
    subject: 'billing.plans.list.v1',
    service: 'billing',
    request: z.object({}).strict(),
    reply: z.object({ plans: z.array(PlanSchema), etag: z.string() }),
    errors: billingErrors(),
    timeoutMs: 2_000,
  }),
  hold: defineEntry({
    subject: 'billing.holds.create.v1',
    service: 'billing',
    request: z.object({
      account_id: AccountIdSchema,
      tool: PaidToolSchema,
      units: z.number().int().positive().max(10_000),
      idempotency_key: storedText(1, 200),
      ttl_s: z.number().int().positive().max(3600).default(300),
    }),
    reply: HoldSchema,
    errors: billingErrors('account_not_found', 'plan_required', 'idempotency_conflict', 'weekly_allowance_reached', 'daily_ceiling_reached'),
    timeoutMs: 2_000,
  }),
  settle: defineEntry({
    subject: 'billing.holds.settle.v1',
    service: 'billing',
    // Either the units used or, for contact_lookup, the contacts returned (billing meters them).
    // Units above the hold are capped at it; the rest of the hold returns to the allowance.
    request: z
      .object({
        account_id: AccountIdSchema,
        hold_id: z.string(),
        // Far above any hold (10,000 units): what a settle reports beyond its hold is capped at it.
        units: z.number().int().nonnegative().max(1_000_000).optional(),
        contacts: z.object({ plain: z.number().int().nonnegative().max(1_000_000), premium: z.number().int().nonnegative().max(1_000_000) }).optional(),
      })
      .refine((r) => (r.units === undefined) !== (r.contacts === undefined), { message: 'give exactly one of units or contacts' }),
    reply: HoldSchema,
    errors: billingErrors('hold_not_found', 'hold_already_resolved'),
    timeoutMs: 2_000,
    // Sent once more if its replica dies mid-request: a hold resolves exactly once in the database,
    // so a repeat cannot charge twice (it answers hold_already_resolved), while giving up would
    // leave a call the client saw charged to expire uncharged.
    idempotent: true,
  }),
  release: defineEntry({
    subject: 'billing.holds.release.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, hold_id: z.string() }),
    reply: HoldSchema,
    errors: billingErrors('hold_not_found', 'hold_already_resolved'),
    timeoutMs: 2_000,
    // As settle: a hold resolves once, so a repeat is harmless.
    idempotent: true,
  }),
  releaseByKey: defineEntry({
    subject: 'billing.holds.release-by-key.v1',
    service: 'billing',
    // The create's caller never heard its answer (a lost reply, a timeout, a client that hung up),
    // so it names the hold as it asked for it. Billing releases it, or, when the create has not
    // landed yet, records the key as released so that a create arriving later takes nothing.
    request: z.object({
      account_id: AccountIdSchema,
      tool: PaidToolSchema,
      units: z.number().int().positive().max(10_000),
      idempotency_key: storedText(1, 200),
    }),
    reply: HoldSchema,
    errors: billingErrors('account_not_found', 'idempotency_conflict'),
    timeoutMs: 2_000,
    // The same request twice leaves the same released hold (the second answers it as it is).
    idempotent: true,
  }),
  usage: defineEntry({
    subject: 'billing.usage.get.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema }),
    reply: UsageSchema,
    errors: billingErrors('account_not_found'),
    timeoutMs: 2_000,
  }),
  usageDaily: defineEntry({
    subject: 'billing.usage.daily.v1',
    service: 'billing',
    // The last `days` UTC days, today included, oldest first, one entry per day (zeros included).
    request: z.object({ account_id: AccountIdSchema, days: z.number().int().min(1).max(90).default(30) }),
    reply: z.object({ account_id: AccountIdSchema, days: z.array(UsageDaySchema) }),
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  // Agent steps' money (spec 03). Amounts are integer micro-dollars.
  creditWallet: defineEntry({
    subject: 'billing.wallet.credit.v1',
    service: 'billing',
    // Prepaid credit added to the balance (an operator's top-up). With an idempotency key, a repeat
    // of the same credit answers the first one's wallet and adds nothing; the same key with another
    // amount is refused (idempotency_key_reused).
    request: z
      .object({ account_id: AccountIdSchema, amount_micros: z.number().int().positive().max(MAX_WALLET_MICROS), idempotency_key: IdempotencyKeySchema.optional() })
      .strict(),
    reply: WalletSchema,
    errors: billingErrors('account_not_found', 'idempotency_key_reused'),
    timeoutMs: 5_000,
  }),
  setAgentLimits: defineEntry({
    subject: 'billing.wallet.limits.v1',
    service: 'billing',
    // monthly_budget_micros null removes the cap; a field left out keeps its value.
    request: z.object({
      account_id: AccountIdSchema,
      monthly_budget_micros: z.number().int().nonnegative().max(MAX_WALLET_MICROS).nullable().optional(),
      agent_steps_per_minute: z.number().int().positive().max(1_000_000).optional(),
    }),
    reply: WalletSchema,
    errors: billingErrors('account_not_found'),
    timeoutMs: 5_000,
  }),
  wallet: defineEntry({
    subject: 'billing.wallet.get.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema }),
    reply: WalletSchema,
    errors: billingErrors('account_not_found'),
    timeoutMs: 2_000,
  }),
  reserveSpend: defineEntry({
    subject: 'billing.spend.reserve.v1',
    service: 'billing',
    request: z.object({
      account_id: AccountIdSchema,
      run_id: storedText(1, 64),
      kind: StepKindSchema,
      amount_micros: z.number().int().nonnegative().max(1_000_000_000_000),
      idempotency_key: storedText(1, 200),
      // Longer than a run's 10-minute wall clock, so a hold never expires under a live operation.
      ttl_s: z.number().int().positive().max(3600).default(900),
    }),
    reply: SpendHoldSchema,
    errors: billingErrors('account_not_found', 'idempotency_conflict', 'agent_rate_limited', 'insufficient_balance', 'monthly_budget_reached'),
    timeoutMs: 2_000,
  }),
  settleSpend: defineEntry({
    subject: 'billing.spend.settle.v1',
    service: 'billing',
    // The actual cost (never above the reservation: refused as bad_request) and what goes into the
    // step's receipt besides what billing states itself (account, cost, time): the kind and run
    // link (checked against the hold), usage and the salted fingerprints.
    request: z.object({
      account_id: AccountIdSchema,
      hold_id: z.string(),
      kind: StepKindSchema,
      amount_micros: z.number().int().nonnegative().max(1_000_000_000_000),
      receipt: ReceiptPayloadSchema.pick({ input_fingerprint: true, output_fingerprint: true }).extend({
        usage: ReceiptUsageInput,
        run: ReceiptPayloadSchema.shape.run.extend({ id: storedText(1, 64), sequence: z.number().int().nonnegative().max(MAX_INT4) }),
      }),
    }),
    reply: z.object({ hold: SpendHoldSchema, receipt: ReceiptSchema }),
    errors: billingErrors('hold_not_found', 'hold_already_resolved', 'receipt_chain_mismatch'),
    timeoutMs: 2_000,
  }),
  releaseSpend: defineEntry({
    subject: 'billing.spend.release.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, hold_id: z.string() }),
    reply: SpendHoldSchema,
    errors: billingErrors('hold_not_found', 'hold_already_resolved'),
    timeoutMs: 2_000,
  }),
  receiptKey: defineEntry({
    subject: 'billing.receipts.key.v1',
    service: 'billing',
    request: z.object({}).strict(),
    reply: ReceiptKeySetSchema,
    errors: billingErrors(),
    timeoutMs: 2_000,
  }),
  signRunEnd: defineEntry({
    subject: 'billing.receipts.run-end.v1',
    service: 'billing',
    // Signed only when count and head are those of receipts billing issued for this run.
    request: z.object({ account_id: AccountIdSchema, run_id: storedText(1, 64), receipt_count: z.number().int().nonnegative(), receipt_head: Hex32 }),
    reply: RunEndSchema,
    errors: billingErrors('receipt_chain_mismatch'),
    timeoutMs: 2_000,
  }),
} as const;
