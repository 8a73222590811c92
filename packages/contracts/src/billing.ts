import { z } from 'zod';
import { COMMON_ERROR_CODES } from './wire-error.js';
import { defineEntry } from './rpc-entry.js';
import { healthEntry } from './health.js';

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
] as const;
export type BillingErrorCode = (typeof BILLING_ERROR_CODES)[number];

/** spec 04: a key's tool level. Each level includes the ones before it. */
export const TOOL_LEVELS = ['none', 'l1_http', 'l3_shell', 'l4_browser'] as const;
export const ToolLevelSchema = z.enum(TOOL_LEVELS);
export type ToolLevel = z.infer<typeof ToolLevelSchema>;

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

export const AccountIdSchema = z.string().min(1).max(64);

export const KeyIdentitySchema = z.object({
  account_id: AccountIdSchema,
  key_id: z.string(),
  tool_level: ToolLevelSchema,
  rate_limit: z.object({ per_minute: z.number().int().positive(), per_hour: z.number().int().positive() }),
  plan: z.string(),
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
});
export type Usage = z.infer<typeof UsageSchema>;

export const billingCatalog = {
  health: healthEntry('billing'),
  verifyKey: defineEntry({
    subject: 'billing.keys.verify.v1',
    service: 'billing',
    request: z.object({ api_key: z.string().min(1).max(256) }),
    reply: KeyIdentitySchema,
    errors: BILLING_ERROR_CODES,
    timeoutMs: 2_000,
  }),
  createAccount: defineEntry({
    subject: 'billing.accounts.create.v1',
    service: 'billing',
    request: z.object({
      name: z.string().min(1).max(200),
      plan: z.string().default('free'),
      extra_usage: z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() }).optional(),
    }),
    reply: z.object({ account_id: AccountIdSchema, name: z.string(), plan: z.string() }),
    errors: BILLING_ERROR_CODES,
    timeoutMs: 5_000,
  }),
  createKey: defineEntry({
    subject: 'billing.keys.create.v1',
    service: 'billing',
    request: z.object({
      account_id: AccountIdSchema,
      name: z.string().max(200).optional(),
      tool_level: ToolLevelSchema.default('l3_shell'),
      rate_limit: z.object({ per_minute: z.number().int().positive(), per_hour: z.number().int().positive() }).optional(),
    }),
    // The secret appears here once and is never stored or returned again.
    reply: z.object({ key_id: z.string(), api_key: z.string().startsWith('drael_'), account_id: AccountIdSchema, tool_level: ToolLevelSchema }),
    errors: BILLING_ERROR_CODES,
    timeoutMs: 5_000,
  }),
  revokeKey: defineEntry({
    subject: 'billing.keys.revoke.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, key_id: z.string() }),
    reply: z.object({ key_id: z.string(), revoked: z.boolean() }),
    errors: BILLING_ERROR_CODES,
    timeoutMs: 5_000,
  }),
  setExtraUsage: defineEntry({
    subject: 'billing.accounts.extra-usage.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative().max(1_000_000) }),
    reply: z.object({ account_id: AccountIdSchema, enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() }),
    errors: BILLING_ERROR_CODES,
    timeoutMs: 5_000,
  }),
  listPlans: defineEntry({
    subject: 'billing.plans.list.v1',
    service: 'billing',
    request: z.object({}).strict(),
    reply: z.object({ plans: z.array(PlanSchema), etag: z.string() }),
    errors: BILLING_ERROR_CODES,
    timeoutMs: 2_000,
  }),
  hold: defineEntry({
    subject: 'billing.holds.create.v1',
    service: 'billing',
    request: z.object({
      account_id: AccountIdSchema,
      tool: PaidToolSchema,
      units: z.number().int().positive().max(10_000),
      idempotency_key: z.string().min(1).max(200),
      ttl_s: z.number().int().positive().max(3600).default(300),
    }),
    reply: HoldSchema,
    errors: BILLING_ERROR_CODES,
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
        units: z.number().int().nonnegative().optional(),
        contacts: z.object({ plain: z.number().int().nonnegative(), premium: z.number().int().nonnegative() }).optional(),
      })
      .refine((r) => (r.units === undefined) !== (r.contacts === undefined), { message: 'give exactly one of units or contacts' }),
    reply: HoldSchema,
    errors: BILLING_ERROR_CODES,
    timeoutMs: 2_000,
  }),
  release: defineEntry({
    subject: 'billing.holds.release.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema, hold_id: z.string() }),
    reply: HoldSchema,
    errors: BILLING_ERROR_CODES,
    timeoutMs: 2_000,
  }),
  usage: defineEntry({
    subject: 'billing.usage.get.v1',
    service: 'billing',
    request: z.object({ account_id: AccountIdSchema }),
    reply: UsageSchema,
    errors: BILLING_ERROR_CODES,
    timeoutMs: 2_000,
  }),
} as const;
