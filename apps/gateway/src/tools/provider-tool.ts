import type { z } from 'zod';
import type { PaidTool } from '@drael/contracts';
import type { BillingHolds, PaidOutcome } from './billing-holds.js';
import type { ServiceHealth } from './service-health.js';
import { parseArguments } from './tool-arguments.js';
import { failed, type ToolResult } from './tool-result.js';
import { ProviderError } from './providers/provider-http.client.js';
import type { Caller } from '../auth/identity.js';
import type { FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';

/**
 * A paid tool behind a configured third-party provider (spec 01 "What a call costs"). The one
 * shape every paid call has: served only when its provider is configured and billing answers;
 * arguments checked; credit held for the most the call can use; the provider called; settled
 * with the units it actually used, released when it did not run. A subclass says only what is
 * its own: schema, units, the provider call and how its answer reads.
 */
export abstract class ProviderTool<Provider, Args> implements ServerTool {
  abstract readonly name: PaidTool;
  /** Names the provider in the model's failure texts ("No image provider is configured"). */
  protected abstract readonly providerLabel: string;
  /** What the model is told did not happen when the provider failed ("No image was made."). */
  protected abstract readonly notDone: string;
  protected abstract readonly args: z.ZodType<Args>;

  constructor(
    protected readonly holds: BillingHolds,
    protected readonly health: ServiceHealth,
  ) {}

  abstract definition(caller: Pick<Caller, 'tool_level'>): FunctionToolDefinition;
  /** The configured provider, or undefined: then the tool is not served (spec 01). */
  protected abstract provider(): Provider | undefined;
  /** Units held before the call: the most it can use. */
  protected abstract holdUnits(args: Args): number;
  /** The provider call and its answer as the model reads it, with the units to settle. */
  /** Not cancelled by the client (BillingHolds.around): a provider call, once sent, is paid for. */
  protected abstract call(provider: Provider, args: Args, ctx: ToolContext): Promise<PaidOutcome>;

  /**
   * Units charged when the provider failed. Undefined (released) by default: a lookup that did
   * not complete is not charged. A per-attempt price overrides it.
   */
  protected unitsOnFailure(_err: ProviderError): number | undefined {
    return undefined;
  }

  isWired(): boolean | Promise<boolean> {
    return this.provider() !== undefined && this.health.isUp('billing');
  }

  async run(rawArgs: unknown, ctx: ToolContext): Promise<ToolResult> {
    const provider = this.provider();
    if (provider === undefined) return failed('not_configured', `No ${this.providerLabel} provider is configured. The tool did not run.`);
    const parsed = parseArguments(this.args, rawArgs);
    if (!parsed.ok) return parsed.result;
    const args = parsed.value;
    return this.holds.around(ctx, this.name, this.holdUnits(args), async () => {
      try {
        return await this.call(provider, args, ctx);
      } catch (err) {
        if (err instanceof ProviderError) return { result: failed(err.code, `${err.message}. ${this.notDone}`), units: this.unitsOnFailure(err) };
        throw err;
      }
    });
  }
}
