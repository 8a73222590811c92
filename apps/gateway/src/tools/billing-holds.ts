import { Inject, Injectable } from '@nestjs/common';
import { billingCatalog, type PaidTool } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { failed, type ToolResult } from './tool-result.js';
import type { ToolContext } from './server-tool.js';

/** What a paid call did: its document for the model, and the units to settle (undefined: it did not run). */
export interface PaidOutcome {
  result: ToolResult;
  units: number | undefined;
}

// Settling and releasing run after the client may have gone: their own short deadline, never the request's signal.
const RESOLVE_TIMEOUT_MS = 5_000;
// The first send and one repeat on a retryable failure (see resolve): two timeouts at worst, met only when billing dies under the call.
const RESOLVE_ATTEMPTS = 2;

/**
 * Credit around each paid call (spec 01 "What a call costs"): hold before, settle after with the
 * units actually used, release when the tool did not run. `plan_required` and
 * `weekly_allowance_reached` come back to the model as `ok: false` with the reason, and the
 * model is told plainly that the tool did not run.
 */
@Injectable()
export class BillingHolds {
  constructor(
    private readonly rpc: NatsRpcClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async around(ctx: ToolContext, tool: PaidTool, units: number, call: (signal: AbortSignal) => Promise<PaidOutcome>): Promise<ToolResult> {
    let holdId: string;
    try {
      const hold = await this.rpc.request(
        billingCatalog.hold,
        { account_id: ctx.caller.account_id, tool, units, idempotency_key: `${ctx.requestId}:${ctx.callId}`, ttl_s: this.config.DRAEL_TOOL_HOLD_TTL_S },
        { signal: ctx.signal, requestId: ctx.requestId },
      );
      holdId = hold.hold_id;
    } catch (err) {
      return refusal(tool, err);
    }

    let outcome: PaidOutcome | undefined;
    try {
      outcome = await call(ctx.signal);
      return outcome.result;
    } catch (err) {
      outcome = undefined;
      throw err;
    } finally {
      await this.resolve(ctx, holdId, outcome?.units);
    }
  }

  /**
   * Settles or releases the hold, sent once more on any retryable failure (chaos runs 5 and 7): a
   * billing replica killed after taking the settle but before its first heartbeat leaves the caller
   * nothing to ask about, so the first attempt ends in `timeout`, not `replica_lost`, and the typed
   * client does not repeat it. A hold resolves once in billing's database, so the repeat (which
   * the queue group gives to any live replica) can never charge twice: `hold_already_resolved`
   * means the first attempt did land.
   */
  private async resolve(ctx: ToolContext, holdId: string, units: number | undefined): Promise<void> {
    const scope = { account_id: ctx.caller.account_id, hold_id: holdId };
    const send = () =>
      units === undefined
        ? this.rpc.request(billingCatalog.release, scope, { timeoutMs: RESOLVE_TIMEOUT_MS, requestId: ctx.requestId })
        : this.rpc.request(billingCatalog.settle, { ...scope, units }, { timeoutMs: RESOLVE_TIMEOUT_MS, requestId: ctx.requestId });
    for (let attempt = 0; attempt < RESOLVE_ATTEMPTS; attempt++) {
      try {
        await send();
        return;
      } catch (err) {
        if (attempt > 0 && isRpcError(err) && err.code === 'hold_already_resolved') return;
        // Not retryable (no such hold, bad request): the hold expires by itself after its TTL, and
        // an unresolved hold is never charged as used.
        if (!isRpcError(err) || !err.retryable) return;
      }
    }
  }
}

function refusal(tool: PaidTool, err: unknown): ToolResult {
  const code = isRpcError(err) ? err.code : 'billing_unavailable';
  switch (code) {
    case 'plan_required':
      return failed('plan_required', `The account's plan does not include ${tool}. The tool did not run; tell the user it needs a plan that includes it.`);
    case 'weekly_allowance_reached':
    case 'daily_ceiling_reached':
      return failed(code, `The account has used its allowance for ${tool} (${code}). The tool did not run.`);
    default:
      return failed(code, `Credit could not be held for ${tool} (${(err as Error).message}). The tool did not run.`);
  }
}
