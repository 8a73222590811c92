import { Injectable } from '@nestjs/common';
import { billingCatalog, type ReceiptKeySet, type ReceiptPayload, type Receipt, type RunEnd, type SpendHold, type StepKind } from '@drael/contracts';
import { isRpcError, NatsRpcClient } from '@drael/nats-rpc';

// A call lost on the way (no reply in time, no responder yet) is asked again: every spend call is
// idempotent (reserve by its key; settle returns the receipt issued the first time; release and
// run end answer as before), so a retry never charges or signs twice.
const RETRY_DELAYS_MS = [100, 400];
async function retryingLost<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const lost = isRpcError(err) && (err.code === 'timeout' || err.code === 'unavailable');
      if (!lost || attempt >= RETRY_DELAYS_MS.length) throw err;
      await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt]));
    }
  }
}

/** How long billing's published receipt keys are kept before they are asked for again. */
const KEY_SET_TTL_MS = 60_000;

/** What the worker puts into a step's receipt; billing adds the account, kind, cost and time, and signs. */
export type ReceiptFields = Pick<ReceiptPayload, 'usage' | 'input_fingerprint' | 'output_fingerprint' | 'run'>;

/**
 * Agent steps' money and receipts, in billing (spec 03: billed to the account that owns the agent;
 * ARCHITECTURE: billing issues each step's receipt). Each operation is reserved at its maximum
 * cost first, then settled with its actual cost (which returns the signed receipt) or released.
 */
@Injectable()
export class SpendClient {
  private keySet?: { readonly asked: Promise<ReceiptKeySet>; readonly at: number };

  constructor(private readonly rpc: NatsRpcClient) {}

  /** What the account can spend now (billing's wallet: balance less what is held). Null for an account billing does not know. */
  async available(accountId: string): Promise<number | null> {
    try {
      return (await retryingLost(() => this.rpc.request(billingCatalog.wallet, { account_id: accountId }))).available_micros;
    } catch (err) {
      if (isRpcError(err) && err.code === 'account_not_found') return null;
      throw err;
    }
  }

  /** Refused with insufficient_balance, monthly_budget_reached or agent_rate_limited. */
  reserve(accountId: string, runId: string, kind: StepKind, amountMicros: number, idempotencyKey: string): Promise<SpendHold> {
    return retryingLost(() =>
      this.rpc.request(billingCatalog.reserveSpend, { account_id: accountId, run_id: runId, kind, amount_micros: amountMicros, idempotency_key: idempotencyKey }),
    );
  }

  /** The cost must be within the reservation (the budget functions cap it there). Settling a settled hold again answers the receipt issued the first time. */
  async settle(accountId: string, hold: Pick<SpendHold, 'hold_id' | 'kind'>, amountMicros: number, receipt: ReceiptFields): Promise<Receipt> {
    const settled = await retryingLost(() =>
      this.rpc.request(billingCatalog.settleSpend, { account_id: accountId, hold_id: hold.hold_id, kind: hold.kind, amount_micros: amountMicros, receipt }),
    );
    return settled.receipt;
  }

  async release(accountId: string, holdId: string): Promise<void> {
    await retryingLost(() => this.rpc.request(billingCatalog.releaseSpend, { account_id: accountId, hold_id: holdId }));
  }

  signRunEnd(accountId: string, runId: string, receiptCount: number, receiptHead: string): Promise<RunEnd> {
    return retryingLost(() => this.rpc.request(billingCatalog.signRunEnd, { account_id: accountId, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead }));
  }

  /**
   * Billing's published receipt keys, kept for a minute; asked again at once when a receipt names a
   * key the kept set lacks (a rotation since), so a new key verifies from its first receipt on. A
   * failed ask is asked again next time.
   */
  async publishedKeys(needed: readonly string[] = []): Promise<ReceiptKeySet> {
    const kept = this.keySet;
    if (kept && performance.now() - kept.at < KEY_SET_TTL_MS) {
      const set = await kept.asked.catch(() => undefined);
      if (set && needed.every((id) => set.keys.some((k) => k.key_id === id))) return set;
    }
    const asked = this.rpc.request(billingCatalog.receiptKey, {});
    this.keySet = { asked, at: performance.now() };
    asked.catch(() => {
      if (this.keySet?.asked === asked) this.keySet = undefined;
    });
    return asked;
  }
}
