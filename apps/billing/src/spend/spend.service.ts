import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  idempotencyRequest,
  ReceiptSchema,
  WalletSchema,
  type ParsedRequestOf,
  type Receipt,
  type ReceiptPayload,
  type ReplyOf,
  type RunEnd,
  type SpendHold,
  type Wallet,
  type billingCatalog,
} from '@drael/contracts';
import { BillingError, billingError, isUuid } from '../billing-error.js';
import { Clock } from '../clock/clock.js';
import { RECEIPT_KEYRING, type ReceiptKeyring } from '../receipts/receipt-keyring.provider.js';
import { chainHead, type ReceiptSigner } from '@drael/receipts';
import { monthStart } from './month.js';
import { SpendRepository } from './spend.repository.js';

type ReserveRequest = ParsedRequestOf<typeof billingCatalog.reserveSpend>;
type SettleRequest = ParsedRequestOf<typeof billingCatalog.settleSpend>;

/**
 * Agent steps billed to the account that owns the agent (spec 03): every operation of a run first
 * reserves its maximum cost here (refused past the balance, the month's budget or the account's
 * step rate), then settles with its actual cost, which issues the step's signed receipt, or
 * releases when it did not run. API-key limits play no part: runs are not made with a key.
 */
@Injectable()
export class SpendService {
  constructor(
    private readonly spend: SpendRepository,
    private readonly clock: Clock,
    @Inject(RECEIPT_KEYRING) private readonly keyring: ReceiptKeyring | null,
  ) {}

  async reserve(req: ReserveRequest, now = this.clock.now()): Promise<SpendHold> {
    // No money is held for a step whose receipt this installation could not sign.
    this.requireSigner();
    if (!isUuid(req.account_id)) throw billingError('account_not_found', 'no such account');
    const { outcome, retryAfterMs, hold } = await this.spend.reserve({
      id: randomUUID(),
      accountId: req.account_id,
      idempotencyKey: req.idempotency_key,
      runId: req.run_id,
      kind: req.kind,
      amountMicros: req.amount_micros,
      now,
      ttlS: req.ttl_s,
    });
    switch (outcome) {
      case 'created':
      case 'existing':
        return hold!;
      case 'account_not_found':
        throw billingError('account_not_found', 'no such account');
      case 'conflict':
        throw billingError('idempotency_conflict', 'this idempotency key was used for a different reservation', { hold_id: hold?.hold_id });
      case 'rate_limited':
        throw billingError('agent_rate_limited', "the account's agent step rate limit is reached", { retry_after_ms: retryAfterMs });
      case 'insufficient_balance':
        throw billingError('insufficient_balance', "the account's balance cannot cover this operation", { amount_micros: req.amount_micros });
      case 'monthly_budget_reached':
        throw billingError('monthly_budget_reached', "the account's monthly budget cannot cover this operation", { amount_micros: req.amount_micros });
    }
  }

  /**
   * Settles with the actual cost (within the reservation) and issues the step's receipt: billing
   * states the account, cost and time; the caller gives the kind and run link (both checked
   * against the hold), usage and fingerprints. One database round trip. Idempotent: settling a
   * settled hold again returns the receipt issued the first time.
   */
  async settle(req: SettleRequest, now = this.clock.now()): Promise<ReplyOf<typeof billingCatalog.settleSpend>> {
    const signer = this.requireSigner();
    if (!isUuid(req.hold_id) || !isUuid(req.account_id)) throw billingError('hold_not_found', 'no such spend hold for this account');
    const payload: ReceiptPayload = {
      version: 1,
      id: `rcpt_${randomBytes(12).toString('hex')}`,
      issued_at: now.toISOString(),
      account_id: req.account_id,
      kind: req.kind,
      cost_micros: req.amount_micros,
      usage: req.receipt.usage,
      input_fingerprint: req.receipt.input_fingerprint,
      output_fingerprint: req.receipt.output_fingerprint,
      run: req.receipt.run,
    };
    const receipt = signer.signReceipt(payload);
    const res = await this.spend.settle({
      holdId: req.hold_id,
      accountId: req.account_id,
      runId: payload.run.id,
      kind: req.kind,
      amountMicros: req.amount_micros,
      now,
      sequence: payload.run.sequence,
      previous: payload.run.previous_receipt_hash,
      hash: receipt.hash,
      receipt,
    });
    switch (res.outcome) {
      case 'resolved':
        return { hold: res.hold!, receipt };
      case 'resolved_before':
        return this.settledBefore(res.hold!, res.receipt);
      case 'not_found':
        throw billingError('hold_not_found', 'no such spend hold for this account');
      case 'mismatch':
        throw billingError('bad_request', `the hold is for run ${res.hold?.run_id} (${res.hold?.kind})`);
      case 'over_reservation':
        throw billingError('bad_request', `the cost ${req.amount_micros} µ$ exceeds the reservation of ${res.hold?.amount_micros} µ$`);
      case 'chain_mismatch':
        throw billingError('receipt_chain_mismatch', `receipt ${payload.run.sequence} does not extend run ${payload.run.id}'s chain as billing issued it`);
    }
  }

  /** The operation did not run: the whole reservation returns. */
  async release(req: ParsedRequestOf<typeof billingCatalog.releaseSpend>, now = this.clock.now()): Promise<SpendHold> {
    const res = isUuid(req.hold_id) && isUuid(req.account_id) ? await this.spend.resolve(req.hold_id, req.account_id, 'released', now) : { outcome: 'not_found' as const };
    if (res.outcome === 'not_found') throw billingError('hold_not_found', 'no such spend hold for this account');
    if (res.outcome === 'resolved_before') {
      // A release repeated after a lost reply is answered as the first one was.
      if (res.hold?.status === 'released') return res.hold;
      throw billingError('hold_already_resolved', `the spend hold is already ${res.hold?.status}`, { status: res.hold?.status });
    }
    return res.hold!;
  }

  /** The sweeper's move for a stale spend hold; false when something else resolved it first. */
  async expire(holdId: string, accountId: string, now = this.clock.now()): Promise<boolean> {
    return (await this.spend.resolve(holdId, accountId, 'expired', now)).outcome === 'resolved';
  }

  /**
   * Signs a run's end, only for a count and head that are those of the receipts billing issued for
   * the run (a prefix of them: a worker killed between a settle and its own write holds one fewer),
   * and releases the run's reservations still held: the run is over.
   */
  async signRunEnd(req: ParsedRequestOf<typeof billingCatalog.signRunEnd>): Promise<RunEnd> {
    const signer = this.requireSigner();
    const hashes = isUuid(req.account_id) ? await this.spend.receiptHashes(req.account_id, req.run_id) : [];
    if (req.receipt_count > hashes.length || chainHead(hashes.slice(0, req.receipt_count)) !== req.receipt_head) {
      throw billingError('receipt_chain_mismatch', `run ${req.run_id}: ${req.receipt_count} receipts with this head were not issued by billing`, {
        issued: hashes.length,
      });
    }
    // A run that ends holds no money any more: a reservation its worker left open (killed
    // mid-operation, the run reaped) returns now, not after its 900 s ttl. Releasing is idempotent,
    // so a repeated run end is harmless.
    for (const holdId of await this.spend.heldForRun(req.account_id, req.run_id)) await this.spend.resolve(holdId, req.account_id, 'released', this.clock.now());
    return signer.signRunEnd(req.run_id, req.receipt_count, req.receipt_head);
  }

  /** The receipt keys billing publishes: the signing one, and every one that still verifies. */
  publishedKeys(): ReplyOf<typeof billingCatalog.receiptKey> {
    this.requireSigner();
    return this.keyring!.published;
  }

  /**
   * An operator's top-up. With an idempotency key (Stripe's semantics) the key's first request
   * decides: the same credit again adds nothing and answers the wallet the first one answered;
   * another amount with the key is idempotency_key_reused (keys are per account).
   */
  async credit(req: ParsedRequestOf<typeof billingCatalog.creditWallet>): Promise<Wallet> {
    if (!isUuid(req.account_id)) throw billingError('account_not_found', 'no such account');
    const requestHash =
      req.idempotency_key === undefined
        ? undefined
        : createHash('sha256')
            .update(idempotencyRequest('POST', `/admin/accounts/${req.account_id}/wallet/credit`, { amount_micros: req.amount_micros }))
            .digest('hex');
    const id = randomUUID();
    const res = await this.spend.credit({ id, accountId: req.account_id, amountMicros: req.amount_micros, idempotencyKey: req.idempotency_key, requestHash });
    if (res.outcome === 'account_not_found') throw billingError('account_not_found', 'no such account');
    if (res.outcome === 'repeat') {
      if (res.requestHash !== requestHash) {
        throw billingError('idempotency_key_reused', 'this Idempotency-Key was already used with a different credit', { param: 'Idempotency-Key' });
      }
      // The first answer; a first top-up that stopped before storing it answers the wallet as it is.
      const first = WalletSchema.safeParse(res.response);
      return first.success ? first.data : this.wallet(req.account_id);
    }
    const wallet = await this.wallet(req.account_id);
    if (req.idempotency_key !== undefined) await this.spend.storeCreditResponse(id, wallet);
    return wallet;
  }

  async setLimits(req: ParsedRequestOf<typeof billingCatalog.setAgentLimits>, now = this.clock.now()): Promise<Wallet> {
    const ok = isUuid(req.account_id) && (await this.spend.setLimits(req.account_id, req.monthly_budget_micros, req.agent_steps_per_minute, monthStart(now)));
    if (!ok) throw billingError('account_not_found', 'no such account');
    return this.wallet(req.account_id, now);
  }

  async wallet(accountId: string, now = this.clock.now()): Promise<Wallet> {
    const w = isUuid(accountId) ? await this.spend.wallet(accountId, monthStart(now)) : null;
    if (!w) throw billingError('account_not_found', 'no such account');
    return w;
  }

  private settledBefore(hold: SpendHold, receipt: unknown): ReplyOf<typeof billingCatalog.settleSpend> {
    const parsed = ReceiptSchema.safeParse(receipt);
    if (hold.status !== 'settled' || !parsed.success) {
      throw billingError('hold_already_resolved', `the spend hold is already ${hold.status}`, { status: hold.status });
    }
    return { hold, receipt: parsed.data satisfies Receipt };
  }

  private requireSigner(): ReceiptSigner {
    // Retryable: an operator can add the key and restart; nothing was written.
    if (!this.keyring) throw new BillingError('unavailable', 'billing has no receipt signing key (BILLING_RECEIPT_KEY)', true);
    return this.keyring.signer;
  }
}
