import { Injectable } from '@nestjs/common';
import { billingCatalog, type ReceiptPayload, type Receipt, type RunEnd, type SpendHold, type StepKind } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';

/** What the worker puts into a step's receipt; billing adds the account, kind, cost and time, and signs. */
export type ReceiptFields = Pick<ReceiptPayload, 'usage' | 'input_fingerprint' | 'output_fingerprint' | 'run'>;

/**
 * Agent steps' money and receipts, in billing (spec 03: billed to the account that owns the agent;
 * ARCHITECTURE: billing issues each step's receipt). Each operation is reserved at its maximum
 * cost first, then settled with its actual cost (which returns the signed receipt) or released.
 */
@Injectable()
export class SpendClient {
  private key?: Promise<{ key_id: string; public_key: string }>;

  constructor(private readonly rpc: NatsRpcClient) {}

  /** Refused with insufficient_balance, monthly_budget_reached or agent_rate_limited. */
  reserve(accountId: string, runId: string, kind: StepKind, amountMicros: number, idempotencyKey: string): Promise<SpendHold> {
    return this.rpc.request(billingCatalog.reserveSpend, { account_id: accountId, run_id: runId, kind, amount_micros: amountMicros, idempotency_key: idempotencyKey });
  }

  /** The cost must be within the reservation (the budget functions cap it there). */
  async settle(accountId: string, hold: SpendHold, amountMicros: number, receipt: ReceiptFields): Promise<Receipt> {
    return (await this.rpc.request(billingCatalog.settleSpend, { account_id: accountId, hold_id: hold.hold_id, kind: hold.kind, amount_micros: amountMicros, receipt })).receipt;
  }

  async release(accountId: string, holdId: string): Promise<void> {
    await this.rpc.request(billingCatalog.releaseSpend, { account_id: accountId, hold_id: holdId });
  }

  signRunEnd(accountId: string, runId: string, receiptCount: number, receiptHead: string): Promise<RunEnd> {
    return this.rpc.request(billingCatalog.signRunEnd, { account_id: accountId, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead });
  }

  /** Billing's receipt key, asked once per process (a failed ask is asked again next time). */
  publicKey(): Promise<{ key_id: string; public_key: string }> {
    this.key ??= this.rpc.request(billingCatalog.receiptKey, {}).catch((err: unknown) => {
      this.key = undefined;
      throw err;
    });
    return this.key;
  }
}
