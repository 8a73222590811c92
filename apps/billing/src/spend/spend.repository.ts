import { Injectable } from '@nestjs/common';
import type { SpendHold, StepKind, Wallet } from '@drael/contracts';
import { PrismaService } from '../db/prisma.service.js';

interface SpendFnRow {
  outcome: string;
  retry_after_ms?: number | null;
  id: string | null;
  run_id: string | null;
  kind: string | null;
  amount_micros: string | null;
  status: string | null;
  settled_micros: string | null;
  expires_at: Date | null;
  receipt?: unknown;
}

export type ReserveOutcome = 'created' | 'existing' | 'conflict' | 'account_not_found' | 'rate_limited' | 'insufficient_balance' | 'monthly_budget_reached';
export type SpendResolveOutcome = 'resolved' | 'resolved_before' | 'not_found';
export type SpendSettleOutcome = SpendResolveOutcome | 'mismatch' | 'over_reservation' | 'chain_mismatch';

export interface ReserveInput {
  id: string;
  accountId: string;
  idempotencyKey: string;
  runId: string;
  kind: StepKind;
  amountMicros: number;
  now: Date;
  ttlS: number;
}

export interface SettleInput {
  holdId: string;
  accountId: string;
  runId: string;
  kind: StepKind;
  amountMicros: number;
  now: Date;
  /** The receipt billing signed for the step, and its place in the run's chain. */
  sequence: number;
  previous: string | null;
  hash: string;
  receipt: unknown;
}

// BIGINT columns arrive as strings from pg; micro-dollar sums stay far below 2^53.
const num = (v: string | number | null | undefined): number => (v === null || v === undefined ? 0 : Number(v));

function toHold(accountId: string, r: SpendFnRow): SpendHold | undefined {
  if (!r.id) return undefined;
  return {
    hold_id: r.id,
    account_id: accountId,
    run_id: r.run_id ?? '',
    kind: r.kind as StepKind,
    amount_micros: num(r.amount_micros),
    status: r.status as SpendHold['status'],
    settled_micros: r.settled_micros === null ? null : num(r.settled_micros),
    expires_at: (r.expires_at ?? new Date(0)).toISOString(),
  };
}

/**
 * Agent steps' cash holds and the account's wallet. Reserve, settle and release are ONE call each
 * of a PL/pgSQL function from the migrations (spend_reserve, spend_settle, spend_resolve): row locks,
 * conditional updates and CHECK constraints make the database itself refuse an overdraft, a
 * month over budget, a rate past the limit, a second resolution or a receipt off the chain.
 */
@Injectable()
export class SpendRepository {
  constructor(private readonly db: PrismaService) {}

  async reserve(r: ReserveInput): Promise<{ outcome: ReserveOutcome; retryAfterMs?: number; hold?: SpendHold }> {
    const { rows } = await this.db.pool.query<SpendFnRow>('SELECT * FROM spend_reserve($1::uuid, $2::uuid, $3, $4, $5, $6::bigint, $7::timestamptz, $8::int)', [
      r.id,
      r.accountId,
      r.idempotencyKey,
      r.runId,
      r.kind,
      r.amountMicros,
      r.now,
      r.ttlS,
    ]);
    const row = rows[0];
    if (!row) throw new Error('spend_reserve returned no row');
    return { outcome: row.outcome as ReserveOutcome, retryAfterMs: row.retry_after_ms ?? undefined, hold: toHold(r.accountId, row) };
  }

  /** Settles with the actual cost and the step's receipt, in one round trip; exactly one resolution wins. */
  async settle(i: SettleInput): Promise<{ outcome: SpendSettleOutcome; hold?: SpendHold; receipt?: unknown }> {
    const { rows } = await this.db.pool.query<SpendFnRow>('SELECT * FROM spend_settle($1::uuid, $2::uuid, $3, $4, $5::bigint, $6::timestamptz, $7::int, $8, $9, $10::jsonb)', [
      i.holdId,
      i.accountId,
      i.runId,
      i.kind,
      i.amountMicros,
      i.now,
      i.sequence,
      i.previous,
      i.hash,
      JSON.stringify(i.receipt),
    ]);
    const row = rows[0];
    if (!row) throw new Error('spend_settle returned no row');
    return { outcome: row.outcome as SpendSettleOutcome, hold: toHold(i.accountId, row), receipt: row.receipt ?? undefined };
  }

  /** Releases or expires; exactly one resolution ever wins. */
  async resolve(holdId: string, accountId: string, status: 'released' | 'expired', now: Date): Promise<{ outcome: SpendResolveOutcome; hold?: SpendHold }> {
    const { rows } = await this.db.pool.query<SpendFnRow>('SELECT * FROM spend_resolve($1::uuid, $2::uuid, $3::"HoldStatus", $4::timestamptz)', [holdId, accountId, status, now]);
    const row = rows[0];
    if (!row) throw new Error('spend_resolve returned no row');
    return { outcome: row.outcome as SpendResolveOutcome, hold: toHold(accountId, row) };
  }

  /** The hashes of the receipts billing issued for a run, in chain order. */
  async receiptHashes(accountId: string, runId: string): Promise<string[]> {
    const { rows } = await this.db.pool.query<{ receipt_hash: string }>(
      `SELECT "receipt_hash" FROM "spend_holds" WHERE "account_id" = $1::uuid AND "run_id" = $2 AND "receipt_sequence" IS NOT NULL
        ORDER BY "receipt_sequence"`,
      [accountId, runId],
    );
    return rows.map((r) => r.receipt_hash);
  }

  /** A run's spend holds still unresolved (an operation its worker never settled or released). */
  async heldForRun(accountId: string, runId: string): Promise<string[]> {
    const { rows } = await this.db.pool.query<{ id: string }>(`SELECT "id" FROM "spend_holds" WHERE "account_id" = $1::uuid AND "run_id" = $2 AND "status" = 'held'`, [
      accountId,
      runId,
    ]);
    return rows.map((r) => r.id);
  }

  /** Spend holds past their expiry and still unresolved (oldest first). */
  async expired(now: Date, limit: number): Promise<{ id: string; accountId: string }[]> {
    const { rows } = await this.db.pool.query<{ id: string; account_id: string }>(
      `SELECT "id", "account_id" FROM "spend_holds" WHERE "status" = 'held' AND "expires_at" <= $1 ORDER BY "expires_at" LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, accountId: r.account_id }));
  }

  /**
   * Adds credit to the balance and records the top-up, in one transaction. With an idempotency key
   * already used by the account nothing is added: the first top-up's request hash and stored
   * answer come back for the caller to compare.
   */
  async credit(c: {
    id: string;
    accountId: string;
    amountMicros: number;
    idempotencyKey?: string;
    requestHash?: string;
  }): Promise<{ outcome: 'credited' | 'account_not_found' } | { outcome: 'repeat'; requestHash: string | null; response: unknown }> {
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      // Takes the account row's lock first: a concurrent top-up with the same key waits here, then finds this one's row.
      const account = await client.query(`SELECT 1 FROM "accounts" WHERE "id" = $1::uuid FOR UPDATE`, [c.accountId]);
      if (account.rowCount !== 1) {
        await client.query('ROLLBACK');
        return { outcome: 'account_not_found' };
      }
      if (c.idempotencyKey !== undefined) {
        const { rows } = await client.query<{ request_hash: string | null; response: unknown }>(
          `SELECT "request_hash", "response" FROM "wallet_credits" WHERE "account_id" = $1::uuid AND "idempotency_key" = $2`,
          [c.accountId, c.idempotencyKey],
        );
        if (rows[0]) {
          await client.query('ROLLBACK');
          return { outcome: 'repeat', requestHash: rows[0].request_hash, response: rows[0].response };
        }
      }
      await client.query(`INSERT INTO "wallet_credits" ("id", "account_id", "amount_micros", "idempotency_key", "request_hash") VALUES ($1::uuid, $2::uuid, $3::bigint, $4, $5)`, [
        c.id,
        c.accountId,
        c.amountMicros,
        c.idempotencyKey ?? null,
        c.requestHash ?? null,
      ]);
      await client.query(`UPDATE "accounts" SET "balance_micros" = "balance_micros" + $2::bigint WHERE "id" = $1::uuid`, [c.accountId, c.amountMicros]);
      await client.query('COMMIT');
      return { outcome: 'credited' };
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }

  /** The answer a top-up gave, kept so that a repeat of it (same idempotency key) answers the same. */
  async storeCreditResponse(id: string, response: Wallet): Promise<void> {
    await this.db.pool.query(`UPDATE "wallet_credits" SET "response" = $2::jsonb WHERE "id" = $1::uuid`, [id, JSON.stringify(response)]);
  }

  /**
   * Sets the monthly budget (null: none) and the step rate; a field left undefined keeps its value.
   * This month's row takes the new budget at once, never below what it already spent or holds
   * (the CHECK would refuse it): lowering the cap stops further spend without rewriting the past.
   */
  async setLimits(accountId: string, monthlyBudget: number | null | undefined, stepsPerMinute: number | undefined, month: Date): Promise<boolean> {
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      const { rowCount } = await client.query(
        `UPDATE "accounts" SET "monthly_budget_micros" = CASE WHEN $2::boolean THEN $3::bigint ELSE "monthly_budget_micros" END,
                "agent_steps_per_minute" = COALESCE($4::int, "agent_steps_per_minute")
          WHERE "id" = $1::uuid`,
        [accountId, monthlyBudget !== undefined, monthlyBudget ?? null, stepsPerMinute ?? null],
      );
      if (rowCount === 1 && monthlyBudget !== undefined) {
        await client.query(
          `UPDATE "monthly_spend" SET "budget_micros" = CASE WHEN $3::bigint IS NULL THEN NULL ELSE GREATEST($3::bigint, "spent_micros" + "held_micros") END
            WHERE "account_id" = $1::uuid AND "month" = $2::date`,
          [accountId, month, monthlyBudget],
        );
      }
      await client.query('COMMIT');
      return rowCount === 1;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }

  async wallet(accountId: string, month: Date): Promise<Wallet | null> {
    const { rows } = await this.db.pool.query<{
      balance_micros: string;
      held_micros: string;
      monthly_budget_micros: string | null;
      agent_steps_per_minute: number;
      spent: string | null;
      month_held: string | null;
    }>(
      `SELECT a."balance_micros", a."held_micros", a."monthly_budget_micros", a."agent_steps_per_minute",
              m."spent_micros" AS "spent", m."held_micros" AS "month_held"
         FROM "accounts" a LEFT JOIN "monthly_spend" m ON m."account_id" = a."id" AND m."month" = $2::date
        WHERE a."id" = $1::uuid`,
      [accountId, month],
    );
    const r = rows[0];
    if (!r) return null;
    const balance = num(r.balance_micros);
    const held = num(r.held_micros);
    return {
      account_id: accountId,
      balance_micros: balance,
      held_micros: held,
      available_micros: balance - held,
      monthly_budget_micros: r.monthly_budget_micros === null ? null : num(r.monthly_budget_micros),
      month_start: month.toISOString(),
      spent_this_month_micros: num(r.spent),
      held_this_month_micros: num(r.month_held),
      agent_steps_per_minute: r.agent_steps_per_minute,
    };
  }
}
