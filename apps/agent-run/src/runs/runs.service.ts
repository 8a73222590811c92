import { createHash, randomBytes } from 'node:crypto';
import { currentSpan } from '@drael/tracing';
import { Inject, Injectable } from '@nestjs/common';
import { NatsRpcClient } from '@drael/nats-rpc';
import {
  idempotencyRequest,
  RunEndSchema,
  taskProblem,
  TERMINAL_RUN_STATUSES,
  type CursorPage,
  type Receipt,
  type Run,
  type RunEvent,
  type RunReceipts,
  type RunStep,
  type ToolLevel,
  type VerifyResult,
} from '@drael/contracts';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { FieldCipher } from '../crypto/field-cipher.js';
import { newId } from '../db/ids.js';
import { AgentRunError } from '../agent-run-error.js';
import { AgentsService, assertToolsAllowed } from '../agents/agents.service.js';
import { pageOf, pageRoomBytes, resolveCursor } from '../db/list-page.js';
import { RunExecutor } from '../loop/run-executor.js';
import { stepView } from './run-view.js';
import { microsToUsd } from '../loop/money.js';
import { leastModelCallMicros, priceOf } from '../loop/budget.js';
import { RunQueue } from '../queue/run.queue.js';
import { SpendClient } from '../spend/spend.client.js';
import { verifyReceipts } from '../receipts/receipt-verifier.js';
import { RunRepository, type RunRow } from './run.repository.js';

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
    private readonly executor: RunExecutor,
    private readonly rpc: NatsRpcClient,
  ) {}

  /**
   * Queues a run of the agent. With an idempotency key (Stripe's semantics): the key's first
   * request decides; the same request again answers that run, another request (another task or
   * another agent) is refused with idempotency_key_reused and starts nothing.
   */
  async create(accountId: string, agentId: string, toolLevel: ToolLevel, task: string, idempotencyKey?: string): Promise<Run> {
    // spec 03: a run starts from a task of 1–50,000 characters.
    const problem = taskProblem(task);
    if (problem) throw new AgentRunError('invalid_task', problem, { param: 'task' });
    const requestHash = idempotencyKey ? sha256(idempotencyRequest('POST', `/v1/agents/${agentId}/runs`, { task })) : undefined;
    if (idempotencyKey) {
      const first = await this.runs.byIdempotencyKey(accountId, idempotencyKey);
      if (first) return this.repeated(first, requestHash!);
    }
    const agent = await this.agents.mustFind(accountId, agentId);
    // spec 04: the key that starts the run must be allowed every tool the agent has.
    assertToolsAllowed(toolLevel, agent.tools, 'agent_id');
    await this.assertCanPayFirstStep(accountId, agent.model);
    const id = newId('run');
    const made = await this.runs.create(
      {
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
        idempotencyHash: requestHash,
        // The run executes later, in a worker: its steps join the trace of the request that created it.
        traceparent: currentSpan().traceparent,
      },
      this.config.AGENT_RUN_ACCOUNT_MAX_QUEUED,
    );
    if (made === 'queue_full') {
      throw new AgentRunError(
        'too_many_queued_runs',
        `this account has ${this.config.AGENT_RUN_ACCOUNT_MAX_QUEUED} runs queued, the most it may; retry when some have started, or cancel some`,
        { limit: this.config.AGENT_RUN_ACCOUNT_MAX_QUEUED },
      );
    }
    if (made === 'agent_gone') throw new AgentRunError('agent_not_found', `no agent ${agentId} in this account`);
    const { run, created } = made;
    if (!created) return this.repeated(run, requestHash!);
    // Enqueued after the row exists (the job says only "run R is waiting"; the claim decides),
    // without holding the answer while Redis is away (enqueueSoon).
    await this.queue.enqueueSoon(run.id);
    return this.toRun(run);
  }

  /**
   * A run is refused before anything is stored when the account's available balance cannot pay
   * even the least model call (attack report 4, F2: on an empty wallet every run was stored and
   * ended budget_exceeded, free rows without end). Only what certainly fails is refused: billing's
   * reservation at each step stays the rule that decides. A repeat of an idempotency key answers
   * its stored run before this, whatever the balance is now; a refused request stored nothing, so
   * its key is still free.
   */
  private async assertCanPayFirstStep(accountId: string, model: string): Promise<void> {
    const least = leastModelCallMicros(priceOf(this.config.AGENT_RUN_MODEL_PRICES, model));
    const available = (await this.spend.available(accountId)) ?? 0;
    if (available >= least) return;
    throw new AgentRunError(
      'insufficient_balance',
      `the account's available balance (${available} µ$) cannot pay for a run's first model call (at least ${least} µ$); add credit and retry`,
      { available_micros: available, required_micros: least },
    );
  }

  /** The first run of an idempotency key, if this request is the one it was made by. */
  private async repeated(first: RunRow, requestHash: string): Promise<Run> {
    if (first.idempotencyHash !== requestHash) {
      throw new AgentRunError('idempotency_key_reused', 'this Idempotency-Key was already used with a different request (another task or agent)', {
        param: 'Idempotency-Key',
      });
    }
    // A repeat after a lost reply may find the job not yet added: adding it again is harmless
    // (the job id is the run id, and the claim happens once).
    if (first.status === 'queued') await this.queue.enqueueSoon(first.id);
    return this.toRun(first);
  }

  async get(accountId: string, runId: string): Promise<Run> {
    return this.toRun(await this.mustFind(accountId, runId));
  }

  async list(accountId: string, page: CursorPage, agentId?: string): Promise<{ runs: Run[]; has_more: boolean }> {
    const cursor = await resolveCursor(page, (id) => this.runs.cursor(accountId, id));
    const { items, hasMore } = pageOf(await this.runs.list(accountId, page, cursor, agentId), page, (r) => this.toRun(r), pageRoomBytes(this.rpc));
    return { runs: items, has_more: hasMore };
  }

  async steps(accountId: string, runId: string): Promise<RunStep[]> {
    await this.mustFind(accountId, runId);
    return (await this.runs.steps(runId)).map(stepView);
  }

  async receipts(accountId: string, runId: string): Promise<RunReceipts> {
    const run = await this.mustFind(accountId, runId);
    const rows = await this.runs.receipts(runId);
    const runEnd = run.runEnd ? RunEndSchema.parse(run.runEnd) : null;
    // Every key the run's signatures name, so a rotation since the set was kept is asked for.
    const named = [...new Set([...rows.map((r) => r.keyId), ...(runEnd ? [runEnd.key_id] : [])])];
    const keys = await this.spend.publishedKeys(named);
    return {
      run_id: runId,
      receipts: rows.map((r) => ({ payload: r.payload as Receipt['payload'], hash: r.hash, key_id: r.keyId, signature: r.signature })),
      run_end: runEnd,
      public_key: keys.public_key,
      key_id: keys.key_id,
      keys: keys.keys,
    };
  }

  async verify(accountId: string, runId: string): Promise<VerifyResult> {
    // Checked against billing's published keys, as any outside verifier would.
    const bundle = await this.receipts(accountId, runId);
    return verifyReceipts(bundle, bundle.keys);
  }

  /**
   * Answers at once. A queued run is cancelled there and then; a running one is marked (status
   * `cancelling`, a run.status event) and its worker stops the operation in flight (a sandbox
   * execution is killed) and ends it `cancelled`. An ended run cannot be cancelled (409).
   */
  async cancel(accountId: string, runId: string): Promise<Run> {
    const run = await this.mustFind(accountId, runId);
    if (TERMINAL_RUN_STATUSES.includes(run.status)) {
      throw new AgentRunError('run_already_finished', `run ${runId} has already ended (${run.status}); there is nothing to cancel`, { status: run.status });
    }
    // A queued run may be a resumed one, with receipts: its run end covers them (none for a run never started).
    if (
      run.status === 'queued' &&
      (await this.runs.cancelQueued(accountId, runId, run.receiptCount, await this.spend.signRunEnd(accountId, runId, run.receiptCount, run.receiptHead)))
    ) {
      return this.get(accountId, runId);
    }
    // Running (or claimed by a worker since it was read).
    await this.runs.requestCancel(accountId, runId);
    // The answer is the run as cancel left it (`cancelling`); then, if this replica is the one
    // executing it, it is stopped now rather than at the worker's next poll.
    const answer = await this.get(accountId, runId);
    this.executor.stopIfRunningHere(runId);
    return answer;
  }

  /** Events after `after`: run.status changes and one run.step per step, then run.done when the run has ended. Waits up to waitMs for news. */
  async events(accountId: string, runId: string, after: number, waitMs: number): Promise<{ events: RunEvent[]; done: boolean }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const run = await this.mustFind(accountId, runId);
      const done = TERMINAL_RUN_STATUSES.includes(run.status);
      const rows = await this.runs.events(runId, after);
      const events: RunEvent[] = rows.map((e) => ({ seq: e.seq, type: e.type as RunEvent['type'], data: e.data as Record<string, unknown> }));
      const doneSeq = run.eventSeq + 1;
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
      // Cancel asked while it executes: `cancelling` until its worker ends it.
      status: row.status === 'running' && row.cancelRequested ? 'cancelling' : row.status,
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

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
