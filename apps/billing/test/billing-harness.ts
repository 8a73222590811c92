import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import pg from 'pg';
import { billingCatalog, type RequestOf, type ReplyOf, type RpcEntry } from '@drael/contracts';
import { NatsRpcClient, startService, type RunningService } from '@drael/nats-rpc';
import { parseDatabaseUrl } from '@drael/db-migrate';
import { testPrefix } from '@drael/test-support';
import { BillingModule } from '../src/billing.module.js';
import { Clock } from '../src/clock/clock.js';
import { configSchema } from '../src/config/config.schema.js';
import { HoldsService } from '../src/holds/holds.service.js';
import { HoldSweeper } from '../src/holds/hold-sweeper.service.js';
import { UsageService } from '../src/usage/usage.service.js';
import { SpendService } from '../src/spend/spend.service.js';
import { SpendSweeper } from '../src/spend/spend-sweeper.service.js';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** A clock the test moves by hand. */
export class TestClock extends Clock {
  constructor(public t = Date.now()) {
    super();
  }
  now(): Date {
    return new Date(this.t);
  }
  set(iso: string): void {
    this.t = Date.parse(iso);
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

export interface Billing {
  running: RunningService;
  client: NatsRpcClient;
  /** client.request with a generous timeout: the shared 2-core machine can be very loaded. */
  rpc<E extends RpcEntry>(entry: E, payload: RequestOf<E>): Promise<ReplyOf<E>>;
  prefix: string;
  databaseUrl: string;
  clock: TestClock;
  holds: HoldsService;
  sweeper: HoldSweeper;
  usage: UsageService;
  spend: SpendService;
  spendSweeper: SpendSweeper;
  /** The Ed25519 seed (hex) this billing signs agent receipts with. */
  receiptKey: string;
  /** A plain pg pool on billing's schema, for assertions on rows and invariants. */
  sql: pg.Pool;
  close(): Promise<void>;
}

/** Billing running in this process on real NATS and PostgreSQL, under a NATS prefix of its own. */
export async function startBilling(): Promise<Billing> {
  const prefix = testPrefix('billing');
  const databaseUrl = inject('databaseUrl');
  const receiptKey = randomBytes(32).toString('hex');
  const config = configSchema.parse({
    DATABASE_URL: databaseUrl,
    DRAEL_NATS_PREFIX: prefix,
    NATS_URL,
    LOG_LEVEL: 'silent',
    DATABASE_POOL_SIZE: '20',
    BILLING_SWEEP_INTERVAL_MS: '600000',
    BILLING_RECEIPT_KEY: receiptKey,
  });
  const clock = new TestClock();
  const running = await startService({
    service: 'billing',
    module: BillingModule.forRoot(config, { clock }),
    catalog: billingCatalog,
    natsUrl: NATS_URL,
    prefix,
    logLevel: 'silent',
  });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  const { url, schema } = parseDatabaseUrl(databaseUrl);
  const sql = new pg.Pool({ connectionString: url, max: 2, options: `-c search_path="${schema}"` });
  return {
    running,
    client,
    rpc: (entry, payload) => client.request(entry, payload, { timeoutMs: 30_000 }),
    prefix,
    databaseUrl,
    clock,
    holds: running.app.get(HoldsService),
    sweeper: running.app.get(HoldSweeper),
    usage: running.app.get(UsageService),
    spend: running.app.get(SpendService),
    spendSweeper: running.app.get(SpendSweeper),
    receiptKey,
    sql,
    close: async () => {
      await client.close();
      await running.close();
      await sql.end();
    },
  };
}

let seq = 0;
/** A fresh account (own allowances), optionally with extra usage on. */
export async function newAccount(b: Billing, plan = 'pro', extra?: { daily_ceiling: number }): Promise<string> {
  const res = await b.rpc(billingCatalog.createAccount, {
    name: `acct-${++seq}`,
    plan,
    ...(extra ? { extra_usage: { enabled: true, daily_ceiling: extra.daily_ceiling } } : {}),
  });
  return res.account_id;
}

/** Uses up the week's allowance until `remaining` units are left (hold + settle through NATS). */
export async function leaveRemaining(b: Billing, accountId: string, tool: 'generate_image' | 'contact_lookup', remaining: number): Promise<void> {
  const usage = await b.usage.get(accountId);
  const meter = tool === 'generate_image' ? 'images' : 'lookups';
  const a = usage.allowances[meter];
  const take = a.allowance - a.used - a.held - remaining;
  if (take <= 0) return;
  const h = await b.rpc(billingCatalog.hold, { account_id: accountId, tool, units: take, idempotency_key: `fill-${++seq}` });
  await b.rpc(billingCatalog.settle, { account_id: accountId, hold_id: h.hold_id, units: take });
}

/** Rejections of an allSettled batch, by error code. */
export function codes(results: PromiseSettledResult<unknown>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const k = r.status === 'fulfilled' ? 'ok' : ((r.reason as { code?: string }).code ?? 'unknown');
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * The database's books balance: every allowance row's held/used equal the sum over its holds,
 * and never exceed the figure. Returns the rows that do not.
 */
export async function unbalanced(sql: pg.Pool, accounts?: string[]): Promise<unknown[]> {
  const only = accounts ? `WHERE w.account_id = ANY($1::uuid[])` : '';
  const onlyD = accounts ? `WHERE d.account_id = ANY($1::uuid[])` : '';
  const params = accounts ? [accounts] : [];
  const weekly = await sql.query(
    `
    SELECT w.account_id, w.week_start, w.meter, w.allowance, w.used, w.held,
           COALESCE(SUM(h.plan_units) FILTER (WHERE h.status = 'held'), 0)::int AS exp_held,
           COALESCE(SUM(LEAST(h.settled_units, h.plan_units)) FILTER (WHERE h.status = 'settled'), 0)::int AS exp_used
      FROM weekly_allowances w
      LEFT JOIN holds h ON h.account_id = w.account_id AND h.week_start = w.week_start AND h.meter = w.meter
     ${only}
     GROUP BY w.account_id, w.week_start, w.meter, w.allowance, w.used, w.held
    HAVING w.held <> COALESCE(SUM(h.plan_units) FILTER (WHERE h.status = 'held'), 0)
        OR w.used <> COALESCE(SUM(LEAST(h.settled_units, h.plan_units)) FILTER (WHERE h.status = 'settled'), 0)
        OR w.used + w.held > w.allowance`,
    params,
  );
  const daily = await sql.query(
    `
    SELECT d.account_id, d.day, d.ceiling, d.used, d.held
      FROM daily_extras d
      LEFT JOIN holds h ON h.account_id = d.account_id AND h.day = d.day
     ${onlyD}
     GROUP BY d.account_id, d.day, d.ceiling, d.used, d.held
    HAVING d.held <> COALESCE(SUM(h.extra_units) FILTER (WHERE h.status = 'held'), 0)
        OR d.used <> COALESCE(SUM(GREATEST(h.settled_units - h.plan_units, 0)) FILTER (WHERE h.status = 'settled'), 0)
        OR d.used + d.held > d.ceiling`,
    params,
  );
  return [...weekly.rows, ...daily.rows];
}
