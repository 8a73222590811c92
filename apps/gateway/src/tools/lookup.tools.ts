import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { BillingHolds, type PaidOutcome } from './billing-holds.js';
import { ProviderTool } from './provider-tool.js';
import { ServiceHealth } from './service-health.js';
import { failed, notFound } from './tool-result.js';
import { postJson } from './providers/provider-http.client.js';
import type { FunctionToolDefinition } from './server-tool.js';
import type { LookupProvider } from './tools.config.js';

// At most this many contacts per call; the hold covers them all at the premium rate.
const MAX_CONTACTS = 20;
const DEFAULT_CONTACTS = 5;

const QuerySchema = z.object({ query: z.string().trim().min(1).max(500) });
const ContactArgsSchema = QuerySchema.extend({ limit: z.number().int().min(1).max(MAX_CONTACTS).optional() });
type QueryArgs = z.infer<typeof QuerySchema>;
type ContactArgs = z.infer<typeof ContactArgsSchema>;

const BreachAnswerSchema = z.object({ results: z.array(z.record(z.string(), z.unknown())) });
const ContactAnswerSchema = z.object({ contacts: z.array(z.looseObject({ premium: z.boolean().optional() })) });

/**
 * breach_lookup → a configured HTTP breach provider (DRAEL_BREACH_PROVIDER). Paid plans only
 * (billing answers plan_required otherwise); one lookup held, settled when the provider answered.
 */
@Injectable()
export class BreachLookupTool extends ProviderTool<LookupProvider, QueryArgs> {
  readonly name = 'breach_lookup' as const;
  protected readonly providerLabel = 'breach';
  protected readonly notDone = 'The lookup did not complete.';
  protected readonly args = QuerySchema;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    holds: BillingHolds,
    health: ServiceHealth,
  ) {
    super(holds, health);
  }

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Find known data breaches for an email, username or domain. Paid.',
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    };
  }

  protected provider(): LookupProvider | undefined {
    return this.config.DRAEL_BREACH_PROVIDER;
  }

  protected holdUnits(): number {
    return 1;
  }

  protected async call(provider: LookupProvider, args: QueryArgs): Promise<PaidOutcome> {
    const answer = BreachAnswerSchema.safeParse(await postJson(provider.url, provider.api_key, { query: args.query }, { timeoutMs: provider.timeout_ms }));
    if (!answer.success) return { result: failed('provider_bad_answer', 'the breach provider answered in an unknown shape'), units: 1 };
    const results = answer.data.results;
    if (results.length === 0) return { result: notFound(`the breach provider was queried for "${args.query}" and holds no breach for it`), units: 1 };
    return { result: { ok: true, found: true, results }, units: 1 };
  }
}

/**
 * contact_lookup → a configured HTTP contact provider (DRAEL_CONTACT_PROVIDER). Metered per
 * contact returned, a premium contact counting double (spec 01): the hold covers the limit at
 * the premium rate and is settled with what came back.
 */
@Injectable()
export class ContactLookupTool extends ProviderTool<LookupProvider, ContactArgs> {
  readonly name = 'contact_lookup' as const;
  protected readonly providerLabel = 'contact';
  protected readonly notDone = 'The lookup did not complete.';
  protected readonly args = ContactArgsSchema;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    holds: BillingHolds,
    health: ServiceHealth,
  ) {
    super(holds, health);
  }

  definition(): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Find contact details for a person or company. Paid per contact.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string' }, limit: { type: 'integer', description: '1-20, default 5' } },
          required: ['query'],
        },
      },
    };
  }

  protected provider(): LookupProvider | undefined {
    return this.config.DRAEL_CONTACT_PROVIDER;
  }

  // The premium rate for every contact asked for: the most the call can use.
  protected holdUnits(args: ContactArgs): number {
    return (args.limit ?? DEFAULT_CONTACTS) * 2;
  }

  protected async call(provider: LookupProvider, args: ContactArgs): Promise<PaidOutcome> {
    const limit = args.limit ?? DEFAULT_CONTACTS;
    const answer = ContactAnswerSchema.safeParse(await postJson(provider.url, provider.api_key, { query: args.query, limit }, { timeoutMs: provider.timeout_ms }));
    if (!answer.success) return { result: failed('provider_bad_answer', 'the contact provider answered in an unknown shape'), units: 0 };
    // Never more than asked for: the hold covered `limit` contacts.
    const contacts = answer.data.contacts.slice(0, limit);
    const units = contacts.reduce((sum, c) => sum + (c.premium ? 2 : 1), 0);
    if (contacts.length === 0) return { result: notFound(`the contact provider was queried for "${args.query}" and holds no contact for it`), units: 0 };
    return { result: { ok: true, found: true, contacts }, units };
  }
}
