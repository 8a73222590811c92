import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  MAX_TASK_CHARS,
  MIN_TASK_CHARS,
  RunEndSchema,
  TERMINAL_RUN_STATUSES,
  type Receipt,
  type Run,
  type RunEvent,
  type RunReceipts,
  type RunStep,
  type VerifyResult,
} from '@drael/contracts';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { FieldCipher } from '../crypto/field-cipher.js';
import { newId } from '../db/ids.js';
import { AgentRunError } from '../agent-run-error.js';
import { AgentsService } from '../agents/agents.service.js';
import { microsToUsd } from '../loop/money.js';
import { RunQueue } from '../queue/run.queue.js';
import { SpendClient } from '../spend/spend.client.js';
import { ZERO_HEAD } from '@drael/receipts';
import { verifyReceipts } from '../receipts/receipt-verifier.js';
import { RunRepository, type RunRow, type StepRow } from './run.repository.js';

/** Runs as the API sees them: created and queued here, executed by the worker, read back decrypted. */
@Injectable()
export class RunsService {
  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly runs: RunRepository,
    private readonly agents: AgentsService,
    private readonly queue: RunQueue,
    private readonly cipher: FieldCipher,
    private readonly spend: SpendClient,
  ) {}

  async create(accountId: string, agentId: string, task: string, idempotencyKey?: string): Promise<Run> {
    // spec 03: a run starts from a task of 1–50,000 characters.
    const length = [...task].length;
    if (length < MIN_TASK_CHARS || length > MAX_TASK_CHARS) {
      throw new AgentRunError('invalid_task', `task must be ${MIN_TASK_CHARS}–${MAX_TASK_CHARS} characters, got ${length}`, { param: 'task' });
    }
    const agent = await this.agents.mustFind(accountId, agentId);
    const id = newId('run');
    const { run, created } = await this.runs.create({
      id,
      accountId,
      agentId,
      model: agent.model,
      tools: agent.tools,
      stepLimit: agent.stepLimit,
      budgetMicros: agent.budgetMicros,
      task: this.cipher.encrypt(task, { table: 'runs', id, column: 'task' }),
      salt: new Uint8Array(randomBytes(32)),
      idempotencyKey,
    });
    // Enqueued after the row exists; a repeated create (same idempotency key) enqueues again,
    // which is harmless: the job id is the run id and the claim happens once.
    if (created || run.status === 'queued') await this.queue.enqueue(run.id);
    return this.toRun(run);
  }

  async get(accountId: string, runId: string): Promise<Run> {
    return this.toRun(await this.mustFind(accountId, runId));
  }

  async list(accountId: string, limit: number, agentId?: string, before?: string): Promise<Run[]> {
    const cursor = before ? (await this.runs.find(accountId, before))?.createdAt : undefined;
    return (await this.runs.list(accountId, limit, agentId, cursor)).map((r) => this.toRun(r));
  }

  async steps(accountId: string, runId: string): Promise<RunStep[]> {
    await this.mustFind(accountId, runId);
    return (await this.runs.steps(runId)).map(toStep);
  }

  async receipts(accountId: string, runId: string): Promise<RunReceipts> {
    const run = await this.mustFind(accountId, runId);
    const [rows, key] = await Promise.all([this.runs.receipts(runId), this.spend.publicKey()]);
    return {
      run_id: runId,
      receipts: rows.map((r) => ({ payload: r.payload as Receipt['payload'], hash: r.hash, key_id: r.keyId, signature: r.signature })),
      run_end: run.runEnd ? RunEndSchema.parse(run.runEnd) : null,
      public_key: key.public_key,
      key_id: key.key_id,
    };
  }

  async verify(accountId: string, runId: string): Promise<VerifyResult> {
    // Checked against billing's public key, as any outside verifier would.
    const bundle = await this.receipts(accountId, runId);
    return verifyReceipts(bundle, bundle.public_key);
  }

  async cancel(accountId: string, runId: string): Promise<Run> {
    await this.mustFind(accountId, runId);
    await this.runs.cancel(accountId, runId, await this.spend.signRunEnd(accountId, runId, 0, ZERO_HEAD));
    return this.get(accountId, runId);
  }

  /** Events after `after`: one per step, then run.done when the run has ended. Waits up to waitMs for news. */
  async events(accountId: string, runId: string, after: number, waitMs: number): Promise<{ events: RunEvent[]; done: boolean }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const run = await this.mustFind(accountId, runId);
      const done = TERMINAL_RUN_STATUSES.includes(run.status);
      const steps = await this.runs.steps(runId, after);
      const events: RunEvent[] = steps.map((s) => ({ seq: s.sequence + 1, type: 'run.step', data: toStep(s) }));
      const doneSeq = run.stepCount + 1;
      if (done && after < doneSeq) {
        events.push({ seq: doneSeq, type: 'run.done', data: this.toRun(run) });
      }
      if (events.length > 0 || done || Date.now() >= deadline) return { events, done };
      await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, deadline - Date.now()))));
    }
  }

  private async mustFind(accountId: string, runId: string): Promise<RunRow> {
    const run = await this.runs.find(accountId, runId);
    if (!run) throw new AgentRunError('run_not_found', `no run ${runId} in this account`);
    return run;
  }

  private toRun(row: RunRow): Run {
    return {
      id: row.id,
      account_id: row.accountId,
      agent_id: row.agentId,
      status: row.status,
      task: this.cipher.decrypt(row.task, { table: 'runs', id: row.id, column: 'task' }),
      output: row.output === null ? null : this.cipher.decrypt(row.output, { table: 'runs', id: row.id, column: 'output' }),
      error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? '' } : null,
      budget_usd: microsToUsd(row.budgetMicros),
      spent_usd: microsToUsd(row.spentMicros),
      step_count: row.stepCount,
      receipt_count: row.receiptCount,
      receipt_head: row.receiptCount > 0 || row.runEnd ? row.receiptHead : null,
      created_at: row.createdAt.toISOString(),
      started_at: row.startedAt?.toISOString() ?? null,
      finished_at: row.finishedAt?.toISOString() ?? null,
    };
  }
}

function toStep(s: StepRow): RunStep {
  return {
    run_id: s.runId,
    sequence: s.sequence,
    kind: s.kind as RunStep['kind'],
    status: s.status as RunStep['status'],
    cost_usd: microsToUsd(s.costMicros),
    detail: s.detail as Record<string, unknown>,
    created_at: s.createdAt.toISOString(),
  };
}
