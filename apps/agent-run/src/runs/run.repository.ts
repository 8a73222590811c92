import { Injectable } from '@nestjs/common';
import type { CursorPage, RunStatus, StepKind } from '@drael/contracts';
import type { ReceiptFields } from '../spend/spend.client.js';
import { PrismaService } from '../db/prisma.service.js';
import { pageQuery, type PageCursor } from '../db/list-page.js';
import { Prisma, type Run as RunRow, type Step as StepRow, type Receipt as ReceiptRow, type RunEvent as RunEventRow } from '../generated/prisma/client.js';
import { watchRuns } from '../agent-run.metrics.js';
import { isForeignKeyViolation } from '../agents/agent.repository.js';

export type { RunRow, StepRow, ReceiptRow, RunEventRow };

/** The claim was lost (lease lapsed, run reaped or cancelled out from under the worker): write nothing more. */
export class ClaimLostError extends Error {
  constructor(runId: string) {
    super(`run ${runId}: this worker no longer holds the claim`);
    this.name = 'ClaimLostError';
  }
}

/** A worker's hold on a run: the fencing token every write must present. */
export interface Claim {
  runId: string;
  token: string;
}

export interface StepWrite {
  sequence: number;
  kind: string;
  status: 'ok' | 'error';
  costMicros: number;
  isModelCall: boolean;
  /** How many receipts the run has before this step (the next receipt's sequence). */
  receiptsBefore: number;
  detail: Prisma.InputJsonValue;
  createdAt: Date;
  /** The step as its run.step event shows it. */
  event: Prisma.InputJsonValue;
  /** The message the step added to the run's conversation, encrypted (steps.message). */
  message?: string;
  receipt?: { sequence: number; hash: string; payload: Prisma.InputJsonValue; keyId: string; signature: string; newHead: string };
}

/**
 * A billed step between its operation and its write (runs.pending_step): what the worker sends
 * billing to settle, and the step it then writes. Recorded under the claim before the settle, so a
 * reaper can settle it again (billing answers the receipt it issued the first time, or issues it
 * now) and write the step and receipt the dead worker could not.
 */
export interface PendingStep {
  /** billing.spend.settle.v1's request, less the account (the run's). */
  settle: { holdId: string; kind: StepKind; amountMicros: number; receipt: ReceiptFields };
  step: {
    sequence: number;
    kind: string;
    status: 'ok' | 'error';
    isModelCall: boolean;
    detail: Record<string, unknown>;
    createdAt: string;
    /** The message the step adds to the conversation, encrypted: a resumed run needs it. */
    message?: string;
  };
}

/** A run whose worker vanished, as the reaper needs it. */
export type LostRun = Pick<RunRow, 'id' | 'accountId' | 'claimToken' | 'receiptCount' | 'receiptHead' | 'pendingStep' | 'resumes' | 'cancelRequested'>;

export interface RunCreate {
  id: string;
  accountId: string;
  agentId: string;
  model: string;
  tools: string[];
  stepLimit: number;
  budgetMicros: number;
  task: string;
  salt: Uint8Array<ArrayBuffer>;
  idempotencyKey?: string;
  idempotencyHash?: string;
  /** The creating request's span (W3C traceparent), restored when the run executes; none when tracing was off. */
  traceparent?: string;
}

/**
 * Runs and their steps and receipts. The database decides who may execute a run: a claim is a
 * conditional update from `queued` that only one caller can win, and carries a fencing token and
 * a lease. Every later write of the worker is conditional on that token, on the run still running
 * and on the lease not having lapsed (by the database's clock), so a worker that stalled, lost
 * its claim or was reaped can write nothing more.
 */
@Injectable()
export class RunRepository {
  constructor(private readonly db: PrismaService) {
    watchRuns({ stuck: () => db.client.run.count({ where: { status: 'running', leaseUntil: { lt: new Date() } } }) });
  }

  /**
   * Inserts a queued run with its first event, unless the account already has `maxQueued` runs
   * queued (`queue_full`, nothing written); with an idempotency key already used by the account,
   * returns the run it made instead (the caller compares the request hashes); `agent_gone` when the
   * agent was removed meanwhile (the runs' foreign key). The count and the insert hold the
   * account's queue lock, so concurrent creates on any replica never pass the cap.
   */
  async create(data: RunCreate, maxQueued: number): Promise<{ run: RunRow; created: boolean } | 'queue_full' | 'agent_gone'> {
    try {
      return await this.db.client.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACCOUNT_QUEUE_LOCK}::int, hashtext(${data.accountId}))`;
        if ((await countInStatus(tx, data.accountId, 'queued')) >= maxQueued) return 'queue_full' as const;
        const run = await tx.run.create({
          data: { ...data, salt: data.salt, eventSeq: 1, events: { create: { seq: 1, type: 'run.status', data: { run_id: data.id, status: 'queued' } } } },
        });
        return { run, created: true };
      });
    } catch (err) {
      if (data.idempotencyKey && err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        const existing = await this.byIdempotencyKey(data.accountId, data.idempotencyKey);
        if (existing) return { run: existing, created: false };
      }
      // The agent was deleted (and, having no run, removed) since the caller read it.
      if (isForeignKeyViolation(err)) return 'agent_gone';
      throw err;
    }
  }

  byIdempotencyKey(accountId: string, key: string): Promise<RunRow | null> {
    return this.db.client.run.findFirst({ where: { accountId, idempotencyKey: key } });
  }

  find(accountId: string, id: string): Promise<RunRow | null> {
    return this.db.client.run.findFirst({ where: { id, accountId } });
  }

  findById(id: string): Promise<RunRow | null> {
    return this.db.client.run.findUnique({ where: { id } });
  }

  /** A page of the account's runs, of one agent or all. */
  list(accountId: string, page: CursorPage, cursor: PageCursor | null, agentId?: string): Promise<RunRow[]> {
    const q = pageQuery(page, cursor);
    return this.db.client.run.findMany({ where: { accountId, ...(agentId ? { agentId } : {}), ...q.where }, orderBy: q.orderBy, take: q.take });
  }

  cursor(accountId: string, id: string): Promise<PageCursor | null> {
    return this.db.client.run.findFirst({ where: { id, accountId }, select: { id: true, createdAt: true } });
  }

  /** The run's events after `after`, in order. */
  events(runId: string, after: number): Promise<RunEventRow[]> {
    return this.db.client.runEvent.findMany({ where: { runId, seq: { gt: after } }, orderBy: { seq: 'asc' } });
  }

  steps(runId: string, fromSequence = 0): Promise<StepRow[]> {
    return this.db.client.step.findMany({ where: { runId, sequence: { gte: fromSequence } }, orderBy: { sequence: 'asc' } });
  }

  receipts(runId: string): Promise<ReceiptRow[]> {
    return this.db.client.receipt.findMany({ where: { runId }, orderBy: { sequence: 'asc' } });
  }

  /** The hash of the run's last receipt (what its next receipt links to), or null before its first. */
  async lastReceiptHash(runId: string): Promise<string | null> {
    const last = await this.db.client.receipt.findFirst({ where: { runId }, orderBy: { sequence: 'desc' }, select: { hash: true } });
    return last?.hash ?? null;
  }

  /** Each step's kind and encrypted message, in order: the conversation a resumed run rebuilds. */
  stepMessages(runId: string): Promise<Array<Pick<StepRow, 'sequence' | 'kind' | 'message'>>> {
    return this.db.client.step.findMany({ where: { runId }, orderBy: { sequence: 'asc' }, select: { sequence: true, kind: true, message: true } });
  }

  /**
   * queued → running, for exactly one caller, and only while the run's account has fewer than
   * `accountCap` runs running (over every replica). Returns the run when this caller won the
   * claim, `account_busy` when the run is still queued because its account is at its cap (the
   * caller asks again later), null when the run is not claimable (claimed, ended or cancelled).
   * Claims of one account take its claim lock, so two replicas cannot both take the last place.
   */
  async claim(claim: Claim, leaseMs: number, accountCap: number): Promise<RunRow | 'account_busy' | null> {
    const won = await this.db.client.$transaction(async (tx) => {
      const [queued] = await tx.$queryRaw<Array<{ account_id: string }>>`
        SELECT "account_id" FROM "runs" WHERE "id" = ${claim.runId} AND "status" = 'queued' AND NOT "cancel_requested"`;
      if (!queued) return null;
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACCOUNT_CLAIM_LOCK}::int, hashtext(${queued.account_id}))`;
      // Read after the lock: every claim of this account committed before it is counted.
      if ((await countInStatus(tx, queued.account_id, 'running')) >= accountCap) return 'account_busy' as const;
      const n = await tx.$executeRaw`
        WITH c AS (
          UPDATE "runs" SET "status" = 'running', "claim_token" = ${claim.token},
                 "lease_until" = now() + ${leaseMs} * interval '1 millisecond', "started_at" = COALESCE("started_at", now()),
                 "event_seq" = "event_seq" + 1
           WHERE "id" = ${claim.runId} AND "status" = 'queued' AND NOT "cancel_requested"
          RETURNING "id", "event_seq")
        ${statusEvent(Prisma.sql`'running'`)}`;
      return n === 1 ? ('won' as const) : null;
    });
    if (won === 'won') return this.findById(claim.runId);
    return won;
  }

  /** Extends the lease; false when the claim is gone (the worker must stop). */
  async heartbeat(claim: Claim, leaseMs: number): Promise<boolean> {
    const n = await this.db.client.$executeRaw`
      UPDATE "runs" SET "lease_until" = now() + ${leaseMs} * interval '1 millisecond'
       WHERE "id" = ${claim.runId} AND "claim_token" = ${claim.token} AND "status" = 'running' AND "lease_until" > now()`;
    return n === 1;
  }

  /** Whether cancel was asked for the run (polled by the worker executing it). */
  async cancelRequested(runId: string): Promise<boolean> {
    const row = await this.db.client.run.findUnique({ where: { id: runId }, select: { cancelRequested: true } });
    return row?.cancelRequested ?? false;
  }

  /** The run as the claim holder sees it before an operation (cancel flag, spend). */
  async current(claim: Claim): Promise<{ cancelRequested: boolean; spentMicros: number }> {
    const row = await this.db.client.run.findFirst({
      where: { id: claim.runId, claimToken: claim.token, status: 'running' },
      select: { cancelRequested: true, spentMicros: true },
    });
    if (!row) throw new ClaimLostError(claim.runId);
    return row;
  }

  /** Records a billed step about to be settled (see PendingStep); the counters must be where the worker expects them. */
  async recordPending(claim: Claim, receiptsBefore: number, pending: PendingStep): Promise<void> {
    const n = await this.db.client.$executeRaw`
      UPDATE "runs" SET "pending_step" = ${JSON.stringify(pending)}::jsonb
       WHERE "id" = ${claim.runId} AND "claim_token" = ${claim.token} AND "status" = 'running' AND "lease_until" > now()
         AND "step_count" = ${pending.step.sequence} AND "receipt_count" = ${receiptsBefore}`;
    if (n !== 1) throw new ClaimLostError(claim.runId);
  }

  /**
   * One step, its cost and (for a billed step) its receipt and the new chain head, written together
   * or not at all. The run row's counters must be where the worker expects them: a step or receipt
   * sequence can never be written twice.
   */
  async recordStep(claim: Claim, step: StepWrite): Promise<void> {
    await this.db.client.$transaction(async (tx) => {
      const seq = await advanceOneStep(tx, claim.runId, claim.token, step, 'held');
      if (seq === undefined) throw new ClaimLostError(claim.runId);
      await insertStep(tx, claim.runId, seq, step);
    });
  }

  /** running → a final status, with the output and the signed run end. */
  async finish(
    claim: Claim,
    end: { status: RunStatus; output: string | null; errorCode: string | null; errorMessage: string | null; runEnd: Prisma.InputJsonValue },
  ): Promise<void> {
    const n = await this.db.client.$executeRaw`
      WITH c AS (
        UPDATE "runs" SET "status" = ${end.status}::"RunStatus", "output" = ${end.output}, "error_code" = ${end.errorCode},
               "error_message" = ${end.errorMessage}, "run_end" = ${JSON.stringify(end.runEnd)}::jsonb,
               "claim_token" = NULL, "lease_until" = NULL, "finished_at" = now(), "event_seq" = "event_seq" + 1
         WHERE "id" = ${claim.runId} AND "claim_token" = ${claim.token} AND "status" = 'running' AND "lease_until" > now()
        RETURNING "id", "event_seq")
      ${statusEvent(Prisma.sql`${end.status}`)}`;
    if (n !== 1) throw new ClaimLostError(claim.runId);
  }

  /**
   * running → queued under the worker's own claim (it stops: SIGTERM past its drain), counting one
   * resume: another worker claims it and goes on from its last written step. False when the claim
   * was lost meanwhile.
   */
  async requeue(claim: Claim): Promise<boolean> {
    return (await requeueStatement(this.db.client, claim.runId, claim.token, Prisma.sql`"lease_until" > now()`)) === 1;
  }

  /**
   * Runs still `queued` that were created more than `olderThanMs` ago (by the database's clock):
   * the reconciler checks that each has a job. Oldest first.
   */
  queuedSince(olderThanMs: number, limit = 100): Promise<Array<{ id: string }>> {
    return this.db.client.$queryRaw`
      SELECT "id" FROM "runs"
       WHERE "status" = 'queued' AND NOT "cancel_requested" AND "created_at" < now() - ${olderThanMs} * interval '1 millisecond'
       ORDER BY "created_at" LIMIT ${limit}`;
  }

  /** Runs whose worker vanished: still `running`, lease lapsed. */
  expired(limit = 50): Promise<LostRun[]> {
    return this.db.client.$queryRaw`
      SELECT "id", "account_id" AS "accountId", "claim_token" AS "claimToken", "receipt_count" AS "receiptCount", "receipt_head" AS "receiptHead",
             "pending_step" AS "pendingStep", "resumes", "cancel_requested" AS "cancelRequested"
        FROM "runs" WHERE "status" = 'running' AND "lease_until" < now() ORDER BY "lease_until" LIMIT ${limit}`;
  }

  /**
   * Retention: removes up to `limit` ended runs that finished more than `olderThanDays` days ago
   * (by the database's clock), oldest first, with their steps, receipts and events (the foreign
   * keys cascade), then each deleted agent that only those runs still named (a deleted agent is
   * kept while a run names it: agent.repository.ts). One transaction, so an agent is never left
   * kept for runs already gone. Rows another replica's sweep holds are skipped, not waited for.
   */
  async purgeEnded(olderThanDays: number, limit: number): Promise<{ runs: number; agents: number }> {
    return this.db.client.$transaction(async (tx) => {
      const gone = await tx.$queryRaw<Array<{ account_id: string; agent_id: string }>>`
        WITH "old" AS (
          SELECT "id" FROM "runs"
           WHERE "finished_at" < now() - ${olderThanDays} * interval '1 day' AND "status" NOT IN ('queued', 'running')
           ORDER BY "finished_at" LIMIT ${limit} FOR UPDATE SKIP LOCKED
        )
        DELETE FROM "runs" r USING "old" WHERE r."id" = "old"."id" RETURNING r."account_id", r."agent_id"`;
      if (gone.length === 0) return { runs: 0, agents: 0 };
      const agentIds = [...new Set(gone.map((g) => g.agent_id))];
      const agents = await tx.$executeRaw`
        DELETE FROM "agents" a
         WHERE a."id" = ANY(${agentIds}::text[]) AND a."deleted_at" IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM "runs" r WHERE r."account_id" = a."account_id" AND r."agent_id" = a."id")`;
      return { runs: gone.length, agents };
    });
  }

  /**
   * Ends a run whose worker was lost, unless its worker came back and renewed the lease meanwhile.
   * `adopted`: the step (and receipt) the worker had settled in billing but not written (its
   * PendingStep), written in the same transaction; the counters must still be where it left them.
   */
  async reap(runId: string, staleToken: string, runEnd: Prisma.InputJsonValue, adopted?: StepWrite): Promise<boolean> {
    return this.afterLostWorker(runId, staleToken, adopted, (db) => reapStatement(db, runId, staleToken, runEnd));
  }

  /**
   * Takes a run whose worker was lost back to `queued`, counting one resume, unless its worker came
   * back meanwhile; `adopted` as for reap. Another worker then resumes it from its last step.
   */
  async requeueLost(runId: string, staleToken: string, adopted?: StepWrite): Promise<boolean> {
    return this.afterLostWorker(runId, staleToken, adopted, (db) => requeueStatement(db, runId, staleToken, Prisma.sql`"lease_until" < now()`));
  }

  /** The lost worker's settled step (if any) written, then `change`, in one transaction; false when someone else acted first. */
  private async afterLostWorker(
    runId: string,
    staleToken: string,
    adopted: StepWrite | undefined,
    change: (db: Pick<Prisma.TransactionClient, '$executeRaw'>) => Promise<number>,
  ): Promise<boolean> {
    if (!adopted) return (await change(this.db.client)) === 1;
    try {
      await this.db.client.$transaction(async (tx) => {
        const seq = await advanceOneStep(tx, runId, staleToken, adopted, 'lapsed');
        if (seq === undefined) throw new ClaimLostError(runId);
        await insertStep(tx, runId, seq, adopted);
        if ((await change(tx)) !== 1) throw new ClaimLostError(runId);
      });
      return true;
    } catch (err) {
      // Someone else ended it first (another reaper), or its worker came back: nothing written.
      if (err instanceof ClaimLostError) return false;
      throw err;
    }
  }

  /**
   * A queued run is cancelled at once (true when this call did it), with its run end signed over
   * `receiptCount` receipts: only while it still has that many (a resumed run that ran meanwhile does not).
   */
  async cancelQueued(accountId: string, runId: string, receiptCount: number, runEnd: Prisma.InputJsonValue): Promise<boolean> {
    const n = await this.db.client.$executeRaw`
      WITH c AS (
        UPDATE "runs" SET "status" = 'cancelled', "cancel_requested" = true, "finished_at" = now(),
               "run_end" = ${JSON.stringify(runEnd)}::jsonb, "event_seq" = "event_seq" + 1
         WHERE "id" = ${runId} AND "account_id" = ${accountId} AND "status" = 'queued' AND "receipt_count" = ${receiptCount}
        RETURNING "id", "event_seq")
      ${statusEvent(Prisma.sql`'cancelled'`)}`;
    return n === 1;
  }

  /** A running run is flagged (its stream gets `cancelling` once); its worker stops it and ends it `cancelled`. */
  async requestCancel(accountId: string, runId: string): Promise<void> {
    await this.db.client.$executeRaw`
      WITH c AS (
        UPDATE "runs" SET "cancel_requested" = true, "event_seq" = "event_seq" + 1
         WHERE "id" = ${runId} AND "account_id" = ${accountId} AND "status" = 'running' AND NOT "cancel_requested"
        RETURNING "id", "event_seq")
      ${statusEvent(Prisma.sql`'cancelling'`)}`;
  }
}

/**
 * Advisory lock classes (pg_advisory_xact_lock(class, key)): an account's queue (creates) and its
 * claims, keyed by a hash of the account id. A hash shared by two accounts only serialises them.
 */
const ACCOUNT_QUEUE_LOCK = 0x61_72_71; // 'arq'
const ACCOUNT_CLAIM_LOCK = 0x61_72_63; // 'arc'

/** How many runs of the account are in `status` (the index on account and status). */
async function countInStatus(tx: Prisma.TransactionClient, accountId: string, status: 'queued' | 'running'): Promise<number> {
  const [row] = await tx.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS "n" FROM "runs" WHERE "account_id" = ${accountId} AND "status" = ${status}::"RunStatus"`;
  return row?.n ?? 0;
}

/**
 * The run.status event of a status change, numbered by the run's event_seq as the change's own
 * UPDATE (the CTE `c`) set it: change and event are one statement, under the run row's lock.
 */
function statusEvent(status: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`INSERT INTO "run_events" ("run_id", "seq", "type", "data")
    SELECT "id", "event_seq", 'run.status', jsonb_build_object('run_id', "id", 'status', ${status}::text) FROM c`;
}

/** running → failed / worker_lost under the lost worker's token, its lease lapsed, with the run end; rows changed (0 or 1). */
function reapStatement(db: Pick<Prisma.TransactionClient, '$executeRaw'>, runId: string, staleToken: string, runEnd: Prisma.InputJsonValue): Promise<number> {
  return db.$executeRaw`
    WITH c AS (
      UPDATE "runs" SET "status" = 'failed', "error_code" = 'worker_lost',
             "error_message" = 'the worker executing this run stopped; the run is not executed again',
             "run_end" = ${JSON.stringify(runEnd)}::jsonb, "claim_token" = NULL, "lease_until" = NULL, "finished_at" = now(),
             "event_seq" = "event_seq" + 1
       WHERE "id" = ${runId} AND "status" = 'running' AND "claim_token" = ${staleToken} AND "lease_until" < now()
      RETURNING "id", "event_seq")
    ${statusEvent(Prisma.sql`'failed'`)}`;
}

/**
 * running → queued under `token` (the worker's own while its lease holds, or a lost worker's once
 * it lapsed), never for a run asked to cancel (a queued run so flagged is never claimed), one resume counted, with its run.status event; rows changed (0 or 1). The counters,
 * the chain head and started_at stay: the next claim goes on from them, on the same wall clock. A
 * pending step still there was never charged (its settle was refused for good): it is dropped, and
 * the resumed run does that operation again.
 */
function requeueStatement(db: Pick<Prisma.TransactionClient, '$executeRaw'>, runId: string, token: string, lease: Prisma.Sql): Promise<number> {
  return db.$executeRaw`
    WITH c AS (
      UPDATE "runs" SET "status" = 'queued', "claim_token" = NULL, "lease_until" = NULL, "resumes" = "resumes" + 1,
             "pending_step" = NULL, "event_seq" = "event_seq" + 1
       WHERE "id" = ${runId} AND "status" = 'running' AND "claim_token" = ${token} AND ${lease} AND NOT "cancel_requested"
      RETURNING "id", "event_seq")
    ${statusEvent(Prisma.sql`'queued'`)}`;
}

/**
 * Moves the run row's counters past one step (its cost, and for a billed step its receipt and the
 * new chain head) and clears the pending step, only if the run is still running under `token`,
 * its lease `held` (the worker's own write) or `lapsed` (a reaper adopting a lost worker's step),
 * and its counters are where the step expects them. Returns the step's event number, or nothing.
 */
async function advanceOneStep(tx: Prisma.TransactionClient, runId: string, token: string, step: StepWrite, lease: 'held' | 'lapsed'): Promise<number | undefined> {
  const r = step.receipt;
  const leaseCondition = lease === 'held' ? Prisma.sql`"lease_until" > now()` : Prisma.sql`"lease_until" < now()`;
  const updated = await tx.$queryRaw<Array<{ event_seq: number }>>`
    UPDATE "runs" SET "spent_micros" = "spent_micros" + ${step.costMicros},
           "step_count" = "step_count" + 1,
           "model_calls" = "model_calls" + ${step.isModelCall ? 1 : 0},
           "receipt_count" = "receipt_count" + ${r ? 1 : 0},
           "receipt_head" = COALESCE(${r ? r.newHead : null}::text, "receipt_head"),
           "event_seq" = "event_seq" + 1, "pending_step" = NULL
     WHERE "id" = ${runId} AND "claim_token" = ${token} AND "status" = 'running' AND ${leaseCondition}
       AND "step_count" = ${step.sequence} AND "receipt_count" = ${step.receiptsBefore}
    RETURNING "event_seq"`;
  return updated.length === 1 ? updated[0]?.event_seq : undefined;
}

/** A step's row, its run.step event (numbered `seq`) and, for a billed step, its receipt. */
async function insertStep(tx: Prisma.TransactionClient, runId: string, seq: number, step: StepWrite): Promise<void> {
  const r = step.receipt;
  await tx.step.create({
    data: {
      runId,
      sequence: step.sequence,
      kind: step.kind,
      status: step.status,
      costMicros: step.costMicros,
      detail: step.detail,
      message: step.message ?? null,
      createdAt: step.createdAt,
    },
  });
  await tx.runEvent.create({ data: { runId, seq, type: 'run.step', data: step.event } });
  if (r) await tx.receipt.create({ data: { runId, sequence: r.sequence, hash: r.hash, payload: r.payload, keyId: r.keyId, signature: r.signature } });
}
