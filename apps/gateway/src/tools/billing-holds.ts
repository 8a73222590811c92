import { Inject, Injectable, Logger } from '@nestjs/common';
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
// Background repeats stop this long before the hold's TTL: a settle arriving as the hold expires would race its expiry.
const RESOLVE_MARGIN_MS = 10_000;

/**
 * Credit around each paid call (spec 01 "What a call costs"): hold before, settle after with the
 * units actually used, release when the tool did not run. `plan_required` and
 * `weekly_allowance_reached` come back to the model as `ok: false` with the reason, and the
 * model is told plainly that the tool did not run.
 */
@Injectable()
export class BillingHolds {
  private readonly logger = new Logger('billing-holds');

  constructor(
    private readonly rpc: NatsRpcClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  /**
   * Once credit is held, `call` runs to its end whatever the client does (it gets no abort signal):
   * a paid provider takes an attempt as soon as it has the request, so an attempt cut off by the
   * client hanging up was one the operator paid for and the account was never charged (an attack
   * pass made any number of image attempts on one allowance unit that way). The provider's own
   * timeout bounds the wait; the answer is settled and dropped.
   */
  async around(ctx: ToolContext, tool: PaidTool, units: number, call: () => Promise<PaidOutcome>): Promise<ToolResult> {
    let holdId: string;
    let expiresAt: number;
    const asked = { account_id: ctx.caller.account_id, tool, units, idempotency_key: `${ctx.requestId}:${ctx.callId}` };
    try {
      const hold = await this.rpc.request(billingCatalog.hold, { ...asked, ttl_s: this.config.DRAEL_TOOL_HOLD_TTL_S }, { signal: ctx.signal, requestId: ctx.requestId });
      // A create answers the hold its key already names, whatever became of it (released by key,
      // settled): only a hold still held lets the tool run, or it would run uncharged.
      if (hold.status !== 'held') return refusal(tool, new Error(`billing answered a hold already ${hold.status}`));
      holdId = hold.hold_id;
      expiresAt = Date.now() + this.config.DRAEL_TOOL_HOLD_TTL_S * 1000;
    } catch (err) {
      if (mayHaveLanded(err)) this.releaseUnanswered(ctx, asked);
      return refusal(tool, err);
    }

    let outcome: PaidOutcome | undefined;
    try {
      outcome = await call();
      return outcome.result;
    } catch (err) {
      outcome = undefined;
      throw err;
    } finally {
      await this.resolve(ctx, holdId, outcome?.units, expiresAt);
    }
  }

  /**
   * Settles or releases the hold, sent once more on any retryable failure (chaos runs 5 and 7): a
   * billing replica killed after taking the settle but before its first heartbeat leaves the caller
   * nothing to ask about, so the first attempt ends in `timeout`, not `replica_lost`, and the typed
   * client does not repeat it. A hold resolves once in billing's database, so a repeat (which
   * the queue group gives to any live replica) can never charge twice: `hold_already_resolved`
   * means an earlier attempt did land.
   *
   * When billing is away altogether (no responders: both attempts fail in microseconds), the tool's
   * result is not held back, but the settle is not given up either: it is sent again in the
   * background, backing off, until shortly before the hold's TTL would expire it uncharged (a paid
   * provider was called; its units are owed). Only then is it lost, and said so in the log.
   */
  private async resolve(ctx: ToolContext, holdId: string, units: number | undefined, expiresAt: number): Promise<void> {
    const scope = { account_id: ctx.caller.account_id, hold_id: holdId };
    const send = () =>
      units === undefined
        ? this.rpc.request(billingCatalog.release, scope, { timeoutMs: RESOLVE_TIMEOUT_MS, requestId: ctx.requestId })
        : this.rpc.request(billingCatalog.settle, { ...scope, units }, { timeoutMs: RESOLVE_TIMEOUT_MS, requestId: ctx.requestId });
    for (let attempt = 0; attempt < RESOLVE_ATTEMPTS; attempt++) {
      const outcome = await resolveOnce(send, attempt > 0);
      if (outcome !== 'retry') return;
    }
    this.resolveLater(send, `hold ${holdId} (request ${ctx.requestId}, ${units === undefined ? 'release' : `settle of ${units} units`})`, expiresAt);
  }

  /**
   * The create had no answer (lost reply, timeout, the client hung up and aborted it), yet billing
   * may have made the hold, or may still make it when the request, already sent, is read: left
   * alone it would count against the allowance until its TTL for a tool that never ran (attack F5).
   * It is released by its idempotency key in the background (the client's answer never waits),
   * as a settle is repeated: now, then backing off, until shortly before the hold would expire
   * anyway. Billing closes the race with a create that arrives after this release: the release
   * records the key as released (a tombstone), and a late create under that key answers that
   * released hold and takes nothing (sql/functions/billing_release_by_key.sql). Resending the
   * create to learn the hold id would not: it could itself be refused (allowance reached) while
   * the original is still in flight, leaving nothing to release and nothing to stop it.
   */
  private releaseUnanswered(ctx: ToolContext, asked: { account_id: string; tool: PaidTool; units: number; idempotency_key: string }): void {
    const expiresAt = Date.now() + this.config.DRAEL_TOOL_HOLD_TTL_S * 1000;
    const send = () => this.rpc.request(billingCatalog.releaseByKey, asked, { timeoutMs: RESOLVE_TIMEOUT_MS, requestId: ctx.requestId });
    const about = `unanswered hold ${asked.idempotency_key} (request ${ctx.requestId}, release by key)`;
    void resolveOnce(send, true).then((outcome) => {
      if (outcome === 'retry') this.resolveLater(send, about, expiresAt);
    });
  }

  /** The background repeats of resolve, from 1 s apart up to 30 s, until RESOLVE_MARGIN_MS before the hold expires. */
  private resolveLater(send: () => Promise<unknown>, about: string, expiresAt: number, delayMs = 1_000): void {
    const at = Date.now() + delayMs;
    if (at > expiresAt - RESOLVE_MARGIN_MS) {
      this.logger.error(`${about}: billing did not answer before the hold's TTL; it expires uncharged`);
      return;
    }
    if (delayMs === 1_000) this.logger.warn(`${about}: billing is not answering; resolving it in the background`);
    setTimeout(() => {
      void resolveOnce(send, true).then((outcome) => {
        if (outcome === 'retry') this.resolveLater(send, about, expiresAt, Math.min(delayMs * 2, 30_000));
      });
    }, delayMs).unref();
  }
}

/** One send of a settle or release: done (it landed, now or before), retry (billing may answer later), or give up (no such hold, a bad request: the hold expires by itself, never charged as used). */
async function resolveOnce(send: () => Promise<unknown>, repeat: boolean): Promise<'done' | 'retry' | 'give_up'> {
  try {
    await send();
    return 'done';
  } catch (err) {
    if (repeat && isRpcError(err) && err.code === 'hold_already_resolved') return 'done';
    return isRpcError(err) && err.retryable ? 'retry' : 'give_up';
  }
}

/**
 * Whether billing may have made the hold though the create failed: anything but billing's own
 * typed refusal (plan, allowance, ceiling, conflict, a bad request), which it answers before or
 * instead of writing one. A retryable failure (timeout, abort, replica lost, no responders,
 * unavailable) or an internal error leaves it unknown.
 */
function mayHaveLanded(err: unknown): boolean {
  return !isRpcError(err) || err.retryable || err.code === 'internal';
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
