import { Injectable } from '@nestjs/common';
import type { Hold, PaidTool } from '@drael/contracts';
import { PrismaService } from '../db/prisma.service.js';
import { watchHolds } from '../billing.metrics.js';

interface HoldFnRow {
  outcome: string;
  plan?: string | null;
  id: string | null;
  tool: string | null;
  units: number | null;
  plan_units: number | null;
  extra_units: number | null;
  status: string | null;
  settled_units: number | null;
  expires_at: Date | null;
}

export type HoldOutcome = 'created' | 'existing' | 'conflict' | 'weekly_allowance_reached' | 'daily_ceiling_reached' | 'account_not_found' | 'plan_required';
export type ResolveOutcome = 'resolved' | 'resolved_before' | 'not_found';
export type ReleaseByKeyOutcome = 'voided' | 'released' | 'resolved_before' | 'conflict' | 'account_not_found';

export interface ReleaseByKeyInput {
  /** The tombstone's id, used only when the create has not landed. */
  id: string;
  accountId: string;
  idempotencyKey: string;
  tool: PaidTool;
  meter: string;
  units: number;
  now: Date;
}

export interface HoldInput {
  id: string;
  accountId: string;
  idempotencyKey: string;
  tool: PaidTool;
  meter: string;
  units: number;
  /** Weekly figure of this meter for each plan that includes the tool (plans.ts); the account's
   *  plan picks one inside the database, and a plan missing here answers plan_required. */
  allowances: Record<string, number>;
  now: Date;
  ttlS: number;
}

function toHold(accountId: string, r: HoldFnRow): Hold | undefined {
  if (!r.id) return undefined;
  return {
    hold_id: r.id,
    account_id: accountId,
    tool: r.tool as PaidTool,
    units: r.units ?? 0,
    plan_units: r.plan_units ?? 0,
    extra_units: r.extra_units ?? 0,
    status: r.status as Hold['status'],
    settled_units: r.settled_units,
    expires_at: (r.expires_at ?? new Date(0)).toISOString(),
  };
}

// Named statements: each pooled connection parses and plans these once, then only binds and runs
// them (an unnamed statement is parsed and planned again on every call; a quarter of the database
// CPU of a hold + settle, see docs/decisions/0003-billing-hot-path.md).
const HOLD_SQL = {
  name: 'billing_hold',
  text: 'SELECT * FROM billing_hold($1::uuid, $2::uuid, $3, $4, $5, $6::int, $7::jsonb, $8::timestamptz, $9::int)',
};
const RELEASE_BY_KEY_SQL = {
  name: 'billing_release_by_key',
  text: 'SELECT * FROM billing_release_by_key($1::uuid, $2::uuid, $3, $4, $5, $6::int, $7::timestamptz)',
};
const RESOLVE_SQL = {
  name: 'billing_resolve',
  text: 'SELECT * FROM billing_resolve($1::uuid, $2::uuid, $3::"HoldStatus", $4::int, $5::timestamptz)',
};

/**
 * Holds as two-phase transfers. Each operation is ONE call of a PL/pgSQL function from the
 * migration (billing_hold, billing_resolve): one round trip, one transaction, row locks and
 * conditional updates inside, and CHECK constraints under them, so the database itself refuses
 * an overdraft or a second resolution whatever the callers do.
 */
@Injectable()
export class HoldRepository {
  constructor(private readonly db: PrismaService) {
    watchHolds(async () => {
      const [open, pastExpiry] = await Promise.all([
        db.client.hold.count({ where: { status: 'held' } }),
        db.client.hold.count({ where: { status: 'held', expiresAt: { lte: new Date() } } }),
      ]);
      return { open, pastExpiry };
    });
  }

  async hold(h: HoldInput): Promise<{ outcome: HoldOutcome; plan?: string; hold?: Hold }> {
    const { rows } = await this.db.pool.query<HoldFnRow>({
      ...HOLD_SQL,
      values: [h.id, h.accountId, h.idempotencyKey, h.tool, h.meter, h.units, JSON.stringify(h.allowances), h.now, h.ttlS],
    });
    const row = rows[0];
    if (!row) throw new Error('billing_hold returned no row');
    return { outcome: row.outcome as HoldOutcome, plan: row.plan ?? undefined, hold: toHold(h.accountId, row) };
  }

  /** Settles (units capped at the hold), releases or expires; exactly one resolution ever wins. */
  async resolve(holdId: string, accountId: string, status: 'settled' | 'released' | 'expired', units: number, now: Date): Promise<{ outcome: ResolveOutcome; hold?: Hold }> {
    const { rows } = await this.db.pool.query<HoldFnRow>({ ...RESOLVE_SQL, values: [holdId, accountId, status, units, now] });
    const row = rows[0];
    if (!row) throw new Error('billing_resolve returned no row');
    return { outcome: row.outcome as ResolveOutcome, hold: toHold(accountId, row) };
  }

  /** Releases the hold made (or still to be made) under an idempotency key; see sql/functions/billing_release_by_key.sql. */
  async releaseByKey(r: ReleaseByKeyInput): Promise<{ outcome: ReleaseByKeyOutcome; hold?: Hold }> {
    const { rows } = await this.db.pool.query<HoldFnRow>({
      ...RELEASE_BY_KEY_SQL,
      values: [r.id, r.accountId, r.idempotencyKey, r.tool, r.meter, r.units, r.now],
    });
    const row = rows[0];
    if (!row) throw new Error('billing_release_by_key returned no row');
    return { outcome: row.outcome as ReleaseByKeyOutcome, hold: toHold(r.accountId, row) };
  }

  /** Holds past their expiry and still unresolved (oldest first). */
  expired(now: Date, limit: number): Promise<{ id: string; accountId: string }[]> {
    return this.db.client.hold.findMany({
      where: { status: 'held', expiresAt: { lte: now } },
      orderBy: { expiresAt: 'asc' },
      take: limit,
      select: { id: true, accountId: true },
    });
  }
}
