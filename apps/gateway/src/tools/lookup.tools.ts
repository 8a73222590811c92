import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { BillingHolds } from './billing-holds.js';
import { ServiceHealth } from './service-health.js';
import { parseArguments } from './tool-arguments.js';
import { failed, notFound, type ToolResult } from './tool-result.js';
import { postJson, ProviderError } from './providers/provider-http.client.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

// At most this many contacts per call; the hold covers them all at the premium rate.
const MAX_CONTACTS = 20;
const DEFAULT_CONTACTS = 5;

const QuerySchema = z.object({ query: z.string().trim().min(1).max(500) });
const ContactArgsSchema = QuerySchema.extend({ limit: z.number().int().min(1).max(MAX_CONTACTS).optional() });

const BreachAnswerSchema = z.object({ results: z.array(z.record(z.string(), z.unknown())) });
const ContactAnswerSchema = z.object({ contacts: z.array(z.looseObject({ premium: z.boolean().optional() })) });

/**
 * breach_lookup → a configured HTTP breach provider (DRAEL_BREACH_PROVIDER). Paid plans only
 * (billing answers plan_required otherwise); one lookup held, settled when the provider answered.
 */
@Injectable()
export class BreachLookupTool implements ServerTool {
  readonly name = 'breach_lookup' as const;
  readonly minLevel = 'l1_http' as const;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly holds: BillingHolds,
    private readonly health: ServiceHealth,
  ) {}

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

  async isWired(): Promise<boolean> {
    return this.config.DRAEL_BREACH_PROVIDER !== undefined && (await this.health.isUp('billing'));
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const provider = this.config.DRAEL_BREACH_PROVIDER;
    if (!provider) return failed('not_configured', 'No breach provider is configured. The tool did not run.');
    const parsed = parseArguments(QuerySchema, args);
    if (!parsed.ok) return parsed.result;
    return this.holds.around(ctx, 'breach_lookup', 1, async (signal) => {
      try {
        const answer = BreachAnswerSchema.safeParse(
          await postJson(provider.url, provider.api_key, { query: parsed.value.query }, { signal, timeoutMs: provider.timeout_ms }),
        );
        if (!answer.success) return { result: failed('provider_bad_answer', 'the breach provider answered in an unknown shape'), units: 1 };
        const results = answer.data.results;
        if (results.length === 0) {
          return { result: notFound(`the breach provider was queried for "${parsed.value.query}" and holds no breach for it`), units: 1 };
        }
        return { result: { ok: true, found: true, results }, units: 1 };
      } catch (err) {
        if (err instanceof ProviderError) return { result: failed(err.code, `${err.message}. The lookup did not complete.`), units: undefined };
        throw err;
      }
    });
  }
}

/**
 * contact_lookup → a configured HTTP contact provider (DRAEL_CONTACT_PROVIDER). Metered per
 * contact returned, a premium contact counting double (spec 01): the hold covers the limit at
 * the premium rate and is settled with what came back.
 */
@Injectable()
export class ContactLookupTool implements ServerTool {
  readonly name = 'contact_lookup' as const;
  readonly minLevel = 'l1_http' as const;

  constructor(
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly holds: BillingHolds,
    private readonly health: ServiceHealth,
  ) {}

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

  async isWired(): Promise<boolean> {
    return this.config.DRAEL_CONTACT_PROVIDER !== undefined && (await this.health.isUp('billing'));
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const provider = this.config.DRAEL_CONTACT_PROVIDER;
    if (!provider) return failed('not_configured', 'No contact provider is configured. The tool did not run.');
    const parsed = parseArguments(ContactArgsSchema, args);
    if (!parsed.ok) return parsed.result;
    const limit = parsed.value.limit ?? DEFAULT_CONTACTS;
    return this.holds.around(ctx, 'contact_lookup', limit * 2, async (signal) => {
      try {
        const answer = ContactAnswerSchema.safeParse(
          await postJson(provider.url, provider.api_key, { query: parsed.value.query, limit }, { signal, timeoutMs: provider.timeout_ms }),
        );
        if (!answer.success) return { result: failed('provider_bad_answer', 'the contact provider answered in an unknown shape'), units: 0 };
        // Never more than asked for: the hold covered `limit` contacts.
        const contacts = answer.data.contacts.slice(0, limit);
        const units = contacts.reduce((sum, c) => sum + (c.premium ? 2 : 1), 0);
        if (contacts.length === 0) {
          return { result: notFound(`the contact provider was queried for "${parsed.value.query}" and holds no contact for it`), units: 0 };
        }
        return { result: { ok: true, found: true, contacts }, units };
      } catch (err) {
        if (err instanceof ProviderError) return { result: failed(err.code, `${err.message}. The lookup did not complete.`), units: undefined };
        throw err;
      }
    });
  }
}
