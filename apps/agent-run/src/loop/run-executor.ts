import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { InferenceChatReply, InferenceMessage, Receipt, ReceiptPayload, RunStatus, SpendHold, StepKind } from '@drael/contracts';
import { isRpcError } from '@drael/nats-rpc';
import { createLogger, type Logger } from '@drael/logger';
import { inSpan, type TraceSpan } from '@drael/tracing';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { FieldCipher } from '../crypto/field-cipher.js';
import { AgentRepository } from '../agents/agent.repository.js';
import { InferenceClient } from '../inference/inference.client.js';
import { SpendClient, type ReceiptFields } from '../spend/spend.client.js';
import { extendHead, fingerprint } from '@drael/receipts';
import { ClaimLostError, RunRepository, type Claim, type LostRun, type PendingStep, type RunRow, type StepWrite } from '../runs/run.repository.js';
import { toolError, type AgentToolDefinition } from '../tools/agent-tool.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { stepView } from '../runs/run-view.js';
import { chargeModelCall, chargeSandbox, inputTokenBound, priceOf, reserveModelCall, reserveSandbox } from './budget.js';
import { recordLeaseLoss, recordRunEnded, recordRunResumed, recordStep } from '../agent-run.metrics.js';
import { conversationSoFar, MODEL_CALL_KIND, type ModelToolCall } from './conversation.js';

interface Ending {
  status: RunStatus;
  output?: string;
  errorCode?: string;
  errorMessage?: string;
}

/** Why the run's abort signal fired. */
type StopReason = 'wall_clock' | 'claim_lost' | 'shutdown' | 'cancelled';

class RunState {
  // Where the run's row says it is: zero for a new run, its last written step for a resumed one.
  stepSeq: number;
  receiptSeq: number;
  head: string;
  spent: number;
  /** When the previous step ended (or the run started here): a step's duration is measured from it. */
  lastStepAt = performance.now();
  constructor(
    readonly row: RunRow,
    /** The hash the next receipt links to (the run's last receipt's). */
    public previousHash: string | null,
  ) {
    this.stepSeq = row.stepCount;
    this.receiptSeq = row.receiptCount;
    this.head = row.receiptHead;
    this.spent = row.spentMicros;
  }
  get remaining() {
    return this.row.budgetMicros - this.spent;
  }
  /**
   * The spend reservation's idempotency key for the next step: the step alone on the run's first
   * execution; with the resume count after, since a reservation cut off by the stop (released, or
   * left to the run end) must not be answered back for the step done again.
   */
  get reservationKey(): string {
    return this.row.resumes === 0 ? `${this.row.id}:${this.stepSeq}` : `${this.row.id}:${this.stepSeq}:r${this.row.resumes}`;
  }
}

/**
 * `account_busy`: the run stays queued, its account at AGENT_RUN_ACCOUNT_CONCURRENCY; its job is
 * taken again later. `requeued`: the run went back to queued to be resumed (this worker stops, or
 * it found the run's worker lost); its job is taken again soon, by any worker.
 */
export type ExecuteResult = 'executed' | 'not_claimed' | 'reaped' | 'claim_lost' | 'account_busy' | 'requeued';

/**
 * The run loop (spec 03). The database claim decides who executes a run; every operation is
 * preceded by the checks that may stop it (cancel, step limit, wall clock, budget), every billed
 * operation writes its step and receipt atomically with the fencing token, and the run ends with a
 * signed (id, count, head).
 */
@Injectable()
export class RunExecutor {
  private readonly log: Logger;
  private readonly active = new Map<string, AbortController>();

  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly runs: RunRepository,
    private readonly agents: AgentRepository,
    private readonly cipher: FieldCipher,
    private readonly spend: SpendClient,
    private readonly inference: InferenceClient,
    private readonly tools: ToolRegistry,
  ) {
    this.log = createLogger('agent-run', config.LOG_LEVEL).child({ component: 'run-executor' });
  }

  get activeRuns(): number {
    return this.active.size;
  }

  /** Stops every run in progress (graceful shutdown past its drain time): each ends as failed. */
  abortAll(): void {
    for (const c of this.active.values()) c.abort('shutdown' satisfies StopReason);
  }

  /** Cancel was asked for a run: if this process executes it, its operation in flight stops now. */
  stopIfRunningHere(runId: string): void {
    this.active.get(runId)?.abort('cancelled' satisfies StopReason);
  }

  /** Resolves when no run is executing in this process. */
  async idle(): Promise<void> {
    while (this.active.size > 0) await new Promise((r) => setTimeout(r, 50));
  }

  async execute(runId: string): Promise<ExecuteResult> {
    const claim: Claim = { runId, token: randomUUID() };
    const row = await this.runs.claim(claim, this.config.AGENT_RUN_LEASE_MS, this.config.AGENT_RUN_ACCOUNT_CONCURRENCY);
    if (row === 'account_busy') return row;
    if (!row) return (await this.reapIfLost(runId)) ?? 'not_claimed';
    // One span per execution, in the trace of the request that created the run (its stored
    // traceparent), or a new trace when that request was not traced; each step is its child.
    return inSpan('agent run', { kind: 'consumer', parent: row.traceparent ?? undefined, attributes: { 'drael.agent_run.id': runId } }, (span) =>
      this.executeClaimed(claim, row, span),
    );
  }

  private async executeClaimed(claim: Claim, row: RunRow, span: TraceSpan): Promise<ExecuteResult> {
    const runId = row.id;
    const controller = new AbortController();
    this.active.set(runId, controller);
    const startedAt = row.startedAt?.getTime() ?? Date.now();
    const wallClock = setTimeout(() => controller.abort('wall_clock' satisfies StopReason), Math.max(0, startedAt + this.config.AGENT_RUN_WALL_CLOCK_MS - Date.now()));
    const heartbeat = setInterval(
      () => {
        this.runs.heartbeat(claim, this.config.AGENT_RUN_LEASE_MS).then(
          (held) => held || controller.abort('claim_lost' satisfies StopReason),
          (err: unknown) => this.log.warn({ err, run_id: runId }, 'heartbeat failed'),
        );
      },
      Math.max(50, Math.floor(this.config.AGENT_RUN_LEASE_MS / 3)),
    );
    // A cancel handled by another replica reaches this one through the database: polled, so the
    // operation in flight (a sandbox execution of up to 30 s) is stopped within a poll.
    const cancelPoll = setInterval(() => {
      this.runs.cancelRequested(runId).then(
        (asked) => asked && controller.abort('cancelled' satisfies StopReason),
        (err: unknown) => this.log.warn({ err, run_id: runId }, 'cancel poll failed'),
      );
    }, this.config.AGENT_RUN_CANCEL_POLL_MS);

    try {
      const state = new RunState(row, row.receiptCount > 0 ? await this.runs.lastReceiptHash(runId) : null);
      let ending: Ending;
      try {
        ending = await this.loop(claim, state, controller.signal);
      } catch (err) {
        ending = this.endingFor(err, controller.signal);
      }
      if (ending.errorCode === 'claim_lost') {
        this.log.warn({ run_id: runId }, 'claim lost: this worker stops writing');
        recordLeaseLoss('worker');
        span.setAttributes({ 'drael.agent_run.status': 'claim_lost' });
        return 'claim_lost';
      }
      // Stopped by this process's shutdown: another worker goes on from the last written step,
      // unless a cancel was asked meanwhile (the shutdown's abort came first): it ends cancelled.
      // (A run that cannot be resumed also ends `interrupted`, but no shutdown stopped it: it ends.)
      const stoppedByShutdown = controller.signal.aborted && (controller.signal.reason as StopReason) === 'shutdown';
      if (stoppedByShutdown && ending.errorCode === 'interrupted') {
        if (await this.runs.cancelRequested(runId)) ending = CANCELLED;
        else if (row.resumes < this.config.AGENT_RUN_MAX_RESUMES) {
          if (!(await this.runs.requeue(claim))) throw new ClaimLostError(runId);
          this.log.info({ run_id: runId, steps: state.stepSeq }, 'stopped by shutdown: queued again, to be resumed from its last step');
          recordRunResumed('shutdown');
          span.setAttributes({ 'drael.agent_run.status': 'requeued' });
          return 'requeued';
        }
      }
      span.setAttributes({ 'drael.agent_run.status': ending.status, 'drael.agent_run.steps': state.stepSeq });
      await this.runs.finish(claim, {
        status: ending.status,
        output: ending.output === undefined ? null : this.cipher.encrypt(ending.output, { table: 'runs', id: runId, column: 'output' }),
        errorCode: ending.errorCode ?? null,
        errorMessage: ending.errorMessage ?? null,
        runEnd: await this.spend.signRunEnd(row.accountId, runId, state.receiptSeq, state.head),
      });
      recordRunEnded(ending);
      return 'executed';
    } catch (err) {
      if (err instanceof ClaimLostError) {
        this.log.warn({ run_id: runId }, 'claim lost while finishing');
        recordLeaseLoss('worker');
        return 'claim_lost';
      }
      throw err;
    } finally {
      clearTimeout(wallClock);
      clearInterval(heartbeat);
      clearInterval(cancelPoll);
      this.active.delete(runId);
    }
  }

  private async loop(claim: Claim, state: RunState, signal: AbortSignal): Promise<Ending> {
    const row = state.row;
    const agent = await this.agents.findForRun(row.agentId);
    if (!agent) return { status: 'failed', errorCode: 'agent_not_found', errorMessage: 'the agent of this run no longer exists' };
    const instructions = this.cipher.decrypt(agent.instructions, { table: 'agents', id: agent.id, column: 'instructions' });
    const task = this.cipher.decrypt(row.task, { table: 'runs', id: row.id, column: 'task' });
    const allowed = this.tools.resolve(row.tools);
    const functions = this.tools.functionDefinitions(allowed);
    const price = priceOf(this.config.AGENT_RUN_MODEL_PRICES, row.model);
    const opening: InferenceMessage[] = [...(instructions ? [{ role: 'system' as const, content: instructions }] : []), { role: 'user', content: task }];
    // A resumed run goes on from its written steps: the conversation and the calls still to run.
    const soFar = state.stepSeq === 0 ? { messages: opening, pendingCalls: [] } : await this.conversationOf(row, opening);
    if ('answer' in soFar) return { status: 'succeeded', output: soFar.answer };
    if ('notResumable' in soFar) return { status: 'failed', errorCode: 'interrupted', errorMessage: `the run cannot be resumed: ${soFar.notResumable}` };
    const messages = soFar.messages;
    let calls: ModelToolCall[] = soFar.pendingCalls;

    for (;;) {
      if (calls.length === 0) {
        const stop = await this.checkBeforeOperation(claim, state, signal);
        if (stop) return stop;

        // One span per step (spec 03: a step is one operation): the model call with its record.
        const model = await inSpan('step inference.chat', { attributes: stepAttributes(state, MODEL_CALL_KIND) }, (span) =>
          this.modelStep(claim, state, messages, functions, price, signal).then((r) => endedIn(span, r)),
        );
        if ('status' in model) return model;
        const { reply } = model;

        calls = reply.message.tool_calls ?? [];
        if (calls.length === 0) return { status: 'succeeded', output: reply.message.content ?? '' };
        messages.push(assistantMessage(reply.message.content, calls));
      }

      for (const call of calls) {
        const stopTool = await this.checkBeforeOperation(claim, state, signal);
        if (stopTool) return stopTool;
        const tool = this.tools.byFunctionName(call.function.name);
        const kind = tool?.registryName ?? 'unknown';
        const content = await inSpan('step tool', { attributes: { ...stepAttributes(state, kind), 'drael.agent_run.tool': tool?.functionName ?? 'unknown' } }, (span) =>
          this.runTool(claim, state, allowed, call, signal).then((r) => endedIn(span, r)),
        );
        if (typeof content !== 'string') return content;
        messages.push(toolMessage(call, content));
      }
      calls = [];
    }
  }

  /** A resumed run's conversation, from its opening and its written steps' messages (decrypted). */
  private async conversationOf(row: RunRow, opening: InferenceMessage[]) {
    const steps = await this.runs.stepMessages(row.id);
    return conversationSoFar(
      opening,
      steps.map((s) => ({
        kind: s.kind,
        message: s.message === null ? null : (JSON.parse(this.cipher.decrypt(s.message, stepMessageRef(row.id, s.sequence))) as InferenceMessage),
      })),
    );
  }

  /** One model call: its budget and the account's money reserved, the call through the gateway's inference subject, its step and receipt recorded. */
  private async modelStep(
    claim: Claim,
    state: RunState,
    messages: InferenceMessage[],
    functions: ReturnType<ToolRegistry['functionDefinitions']>,
    price: ReturnType<typeof priceOf>,
    signal: AbortSignal,
  ): Promise<Ending | { reply: InferenceChatReply }> {
    const row = state.row;
    const requestBody = { messages, tools: functions.length ? functions : undefined };
    const requestJson = JSON.stringify(requestBody);
    const reservation = reserveModelCall(state.remaining, inputTokenBound(requestJson, messages.length), price, this.config.AGENT_RUN_MAX_OUTPUT_TOKENS);
    if (!reservation) return budgetExceeded('the remaining budget cannot pay for 64 output tokens of the next model call');

    // The account's money next (spec 03: its balance, monthly budget and rate limit apply).
    const hold = await this.reserveSpend(state, 'inference.chat', reservation.ceilingMicros);
    if (!('hold_id' in hold)) return hold;
    let reply, attempts;
    try {
      ({ reply, attempts } = await this.inference.chat(
        { account_id: row.accountId, model: row.model, ...requestBody, max_tokens: reservation.maxTokens, origin: { kind: 'agent_run', run_id: row.id, step: state.stepSeq } },
        signal,
      ));
    } catch (err) {
      await this.releaseSpend(state, hold);
      throw err;
    }
    // One charge for the call however many attempts it took: failed attempts produced no output.
    const cost = chargeModelCall(reply.usage, price, reservation);
    await this.record(claim, state, {
      kind: 'inference.chat',
      isModelCall: true,
      status: 'ok',
      cost,
      hold,
      detail: {
        model: reply.model,
        prompt_tokens: reply.usage.prompt_tokens,
        completion_tokens: reply.usage.completion_tokens,
        max_tokens: reservation.maxTokens,
        finish_reason: reply.finish_reason,
        attempts,
      },
      usage: { model: reply.model, prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens, max_tokens: reservation.maxTokens },
      input: requestJson,
      output: JSON.stringify(reply.message),
      message: assistantMessage(reply.message.content, reply.message.tool_calls ?? []),
    });
    return { reply };
  }

  /** One tool call: a tool error for the model, or the result; an Ending when the budget refuses it. */
  private async runTool(claim: Claim, state: RunState, allowed: AgentToolDefinition[], call: ModelToolCall, signal: AbortSignal): Promise<string | Ending> {
    const tool = allowed.find((t) => t.functionName === call.function.name);
    if (!tool) {
      const known = this.tools.byFunctionName(call.function.name);
      return this.toolRefused(
        claim,
        state,
        call,
        known ? 'tool_not_allowed' : 'unknown_tool',
        known ? `this agent may not use ${call.function.name}` : `there is no tool ${call.function.name}`,
      );
    }
    let args: unknown;
    try {
      args = tool.args.parse(JSON.parse(call.function.arguments || '{}'));
    } catch (err) {
      const issue = (err as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues?.[0];
      return this.toolRefused(claim, state, call, 'invalid_arguments', issue ? `${issue.path.join('.') || 'arguments'}: ${issue.message}` : 'arguments are not valid JSON');
    }
    const reservation = reserveSandbox(state.remaining, tool.timeoutS, this.config.AGENT_RUN_SANDBOX_USD_PER_SECOND * 1_000_000);
    if (reservation === null) return budgetExceeded(`the remaining budget cannot cover ${tool.functionName}'s full ${tool.timeoutS} s timeout`);
    const hold = await this.reserveSpend(state, tool.registryName, reservation);
    if (!('hold_id' in hold)) return hold;

    let outcome;
    try {
      outcome = await tool.execute(args, { accountId: state.row.accountId, runId: state.row.id, signal });
    } catch (err) {
      await this.releaseSpend(state, hold);
      throw err;
    }
    // A call the sandbox refused before running costs nothing: its reservation returns whole.
    if (!outcome.ran) await this.releaseSpend(state, hold);
    await this.record(claim, state, {
      kind: tool.registryName,
      isModelCall: false,
      status: outcome.ok ? 'ok' : 'error',
      cost: outcome.ran ? chargeSandbox(outcome.durationS, this.config.AGENT_RUN_SANDBOX_USD_PER_SECOND * 1_000_000, reservation) : 0,
      hold: outcome.ran ? hold : undefined,
      detail: { tool: tool.functionName, tool_call_id: call.id, ran: outcome.ran, ...outcome.usage },
      usage: outcome.usage,
      input: call.function.arguments,
      output: outcome.content,
      message: toolMessage(call, outcome.content),
    });
    return outcome.content;
  }

  private async toolRefused(claim: Claim, state: RunState, call: ModelToolCall, code: string, message: string): Promise<string> {
    const content = toolError(code, message);
    await this.record(claim, state, {
      kind: 'sandbox.execute',
      isModelCall: false,
      status: 'error',
      cost: 0,
      detail: { tool: call.function.name, error: code, ran: false },
      message: toolMessage(call, content),
    });
    return content;
  }

  /**
   * Cancel, wall clock and the step limit: checked before each operation. A step is one operation
   * (a model call or one tool call): the run never takes more than step_limit of them, so its
   * step_count never passes its step_limit.
   */
  private async checkBeforeOperation(claim: Claim, state: RunState, signal: AbortSignal): Promise<Ending | null> {
    if (signal.aborted) return this.endingFor(signal.reason, signal);
    const current = await this.runs.current(claim);
    if (current.cancelRequested) return CANCELLED;
    if (state.stepSeq >= state.row.stepLimit) {
      return { status: 'step_limit_reached', errorCode: 'step_limit_reached', errorMessage: `the step limit of ${state.row.stepLimit} steps was reached` };
    }
    return null;
  }

  /**
   * A run's operation reserved in billing at its maximum cost, under a key of the run and step (a
   * repeated request holds once). The account's refusals end the run as budget_exceeded, with
   * billing's code saying which limit it was.
   */
  private async reserveSpend(state: RunState, kind: StepKind, amountMicros: number): Promise<SpendHold | Ending> {
    try {
      return await this.spend.reserve(state.row.accountId, state.row.id, kind, amountMicros, state.reservationKey);
    } catch (err) {
      if (isRpcError(err) && ACCOUNT_REFUSALS.has(err.code)) return { status: 'budget_exceeded', errorCode: err.code, errorMessage: err.message };
      throw err;
    }
  }

  /** The operation did not run: its reservation returns. If billing cannot be told, its sweeper expires the hold. */
  private async releaseSpend(state: RunState, hold: SpendHold): Promise<void> {
    await this.spend.release(state.row.accountId, hold.hold_id).catch((err: unknown) => this.log.warn({ err, run_id: state.row.id, hold_id: hold.hold_id }, 'release failed'));
  }

  /**
   * One step. A billed step (one with a spend hold) is recorded as the run's pending step, then
   * settled in billing, which charges the account and issues the step's signed receipt at the run's
   * next sequence, linked to the previous hash; the step, its receipt and the new head are then
   * written together under the claim (clearing the pending step).
   */
  private async record(
    claim: Claim,
    state: RunState,
    s: {
      kind: string;
      isModelCall: boolean;
      status: 'ok' | 'error';
      cost: number;
      hold?: SpendHold;
      detail: Record<string, unknown>;
      usage?: ReceiptPayload['usage'];
      input?: string;
      output?: string;
      /** What the step adds to the conversation: kept (encrypted) so a resumed run can rebuild it. */
      message: InferenceMessage;
    },
  ): Promise<void> {
    const step: PendingStep['step'] = {
      sequence: state.stepSeq,
      kind: s.kind,
      status: s.status,
      isModelCall: s.isModelCall,
      detail: s.detail,
      createdAt: new Date().toISOString(),
      message: this.cipher.encrypt(JSON.stringify(s.message), stepMessageRef(state.row.id, state.stepSeq)),
    };
    let write: StepWrite;
    let signed: Receipt | undefined;
    if (s.hold) {
      const salt = state.row.salt;
      const receipt: ReceiptFields = {
        usage: s.usage ?? {},
        input_fingerprint: fingerprint(salt, s.input ?? ''),
        output_fingerprint: fingerprint(salt, s.output ?? ''),
        run: { id: state.row.id, sequence: state.receiptSeq, previous_receipt_hash: state.previousHash },
      };
      // Recorded before billing charges it: if this worker dies before its own write, the reaper
      // settles it again (billing answers the same receipt) and writes it (endLostRun).
      await this.runs.recordPending(claim, state.receiptSeq, { settle: { holdId: s.hold.hold_id, kind: s.hold.kind, amountMicros: s.cost, receipt }, step });
      signed = await this.spend.settle(state.row.accountId, s.hold, s.cost, receipt);
      write = billedStep(state.row.id, step, state.receiptSeq, state.head, signed);
    } else {
      write = unbilledStep(state.row.id, step, state.receiptSeq, s.cost);
    }
    await this.runs.recordStep(claim, write);
    state.stepSeq++;
    state.spent += write.costMicros;
    recordStep(s.kind, state.lastStepAt);
    state.lastStepAt = performance.now();
    if (signed) {
      state.receiptSeq++;
      state.previousHash = signed.hash;
      state.head = write.receipt!.newHead;
    }
  }

  private endingFor(err: unknown, signal: AbortSignal): Ending {
    const reason = signal.aborted ? (signal.reason as StopReason) : undefined;
    if (err instanceof ClaimLostError || reason === 'claim_lost') return { status: 'failed', errorCode: 'claim_lost' };
    if (reason === 'wall_clock')
      return { status: 'timed_out', errorCode: 'timed_out', errorMessage: `the run passed its ${this.config.AGENT_RUN_WALL_CLOCK_MS} ms wall-clock limit` };
    if (reason === 'shutdown') return { status: 'failed', errorCode: 'interrupted', errorMessage: 'the service shut down during the run' };
    if (reason === 'cancelled') return CANCELLED;
    if (isRpcError(err)) return { status: 'failed', errorCode: err.code, errorMessage: err.message };
    this.log.error({ err }, 'run failed unexpectedly');
    return { status: 'failed', errorCode: 'internal', errorMessage: 'internal error' };
  }

  /**
   * A run this caller could not claim: if it is still `running` but its lease lapsed, its worker is
   * gone: it is taken back to queued to be resumed, or ended past its resumes (endLostRun).
   */
  async reapIfLost(runId: string): Promise<'reaped' | 'requeued' | undefined> {
    const row = await this.runs.findById(runId);
    if (!row || row.status !== 'running' || !row.claimToken || !row.leaseUntil || row.leaseUntil.getTime() > Date.now()) return undefined;
    return this.endLostRun(row);
  }

  /**
   * Sweeps every run whose worker vanished (called on an interval by each worker process). Returns
   * the runs taken back to queued: the caller makes sure each has a job.
   */
  async reapExpired(): Promise<{ reaped: number; requeued: string[] }> {
    let reaped = 0;
    const requeued: string[] = [];
    for (const r of await this.runs.expired()) {
      try {
        const outcome = await this.endLostRun(r);
        if (outcome) recordLeaseLoss('reaped');
        if (outcome === 'reaped') reaped++;
        if (outcome === 'requeued') requeued.push(r.id);
      } catch (err) {
        // Billing unreachable for now: the next sweep tries this run again; the others go on.
        this.log.warn({ err, run_id: r.id }, 'could not end a run whose worker was lost');
      }
    }
    return { reaped, requeued };
  }

  /**
   * A run whose worker is gone. A step its worker had sent to billing but not written
   * (runs.pending_step) is settled again: billing answers the receipt it issued (or issues it now:
   * the operation ran), and the step and receipt are written, so the account is never charged for
   * a step the run holds no receipt of. Then the run goes back to queued, and another worker
   * resumes it from that step (an operation cut off mid-way is done again under a new reservation;
   * the cut one was never charged, and billing releases it when the run ends). Past
   * AGENT_RUN_MAX_RESUMES it ends failed / worker_lost instead, its run end signed over the receipts
   * it has.
   */
  private async endLostRun(r: LostRun): Promise<'reaped' | 'requeued' | undefined> {
    if (!r.claimToken) return undefined;
    const pending = r.pendingStep as unknown as PendingStep | null;
    let adopted: StepWrite | undefined;
    if (pending) {
      try {
        const signed = await this.spend.settle(r.accountId, { hold_id: pending.settle.holdId, kind: pending.settle.kind }, pending.settle.amountMicros, pending.settle.receipt);
        adopted = billedStep(r.id, pending.step, r.receiptCount, r.receiptHead, signed);
      } catch (err) {
        // Refused for good (its hold was released or expired first): nothing was charged, the run goes on (or ends) without the step.
        if (!isRpcError(err) || err.retryable) throw err;
        this.log.warn({ err, run_id: r.id }, "a lost worker's pending step was not settled; the run goes on without it");
      }
    }
    // A run whose cancel was asked is not resumed: it ends here (a queued run asked to cancel is never claimed).
    if (!r.cancelRequested && r.resumes < this.config.AGENT_RUN_MAX_RESUMES) {
      if (!(await this.runs.requeueLost(r.id, r.claimToken, adopted))) return undefined;
      this.log.warn({ run_id: r.id }, "the run's worker was lost: queued again, to be resumed from its last step");
      recordRunResumed('worker_lost');
      return 'requeued';
    }
    const count = r.receiptCount + (adopted ? 1 : 0);
    const head = adopted?.receipt?.newHead ?? r.receiptHead;
    return (await this.runs.reap(r.id, r.claimToken, await this.spend.signRunEnd(r.accountId, r.id, count, head), adopted)) ? 'reaped' : undefined;
  }
}

/** A billed step as written: its cost is what billing charged, its receipt the one billing signed, extending the run's chain. */
function billedStep(runId: string, step: PendingStep['step'], receiptsBefore: number, head: string, signed: Receipt): StepWrite {
  const write = unbilledStep(runId, step, receiptsBefore, signed.payload.cost_micros);
  const newHead = extendHead(head, signed.hash);
  return {
    ...write,
    receipt: { sequence: receiptsBefore, hash: signed.hash, payload: signed.payload as unknown as object, keyId: signed.key_id, signature: signed.signature, newHead },
  };
}

/** A step as written (its row and its run.step event), without a receipt. */
function unbilledStep(runId: string, step: PendingStep['step'], receiptsBefore: number, cost: number): StepWrite {
  const row = {
    runId,
    sequence: step.sequence,
    kind: step.kind,
    status: step.status,
    costMicros: cost,
    detail: { ...step.detail, cost_micros: cost },
    createdAt: new Date(step.createdAt),
  };
  return { ...row, isModelCall: step.isModelCall, receiptsBefore, event: stepView(row) as unknown as object, ...(step.message ? { message: step.message } : {}) };
}

/** Where a step's message is encrypted: its run and sequence bind the ciphertext to its row. */
const stepMessageRef = (runId: string, sequence: number) => ({ table: 'steps', id: `${runId}:${sequence}`, column: 'message' });

/** The model's reply as the conversation carries it (and as a resumed run reads it back). */
function assistantMessage(content: string | null | undefined, calls: readonly ModelToolCall[]): InferenceMessage {
  return calls.length > 0 ? { role: 'assistant', content: content ?? null, tool_calls: [...calls] } : { role: 'assistant', content: content ?? null };
}

/** A tool call's answer as the conversation carries it. */
function toolMessage(call: ModelToolCall, content: string): InferenceMessage {
  return { role: 'tool', tool_call_id: call.id, content };
}

// billing's refusals of an agent operation: the account's balance, monthly budget or step rate.
const ACCOUNT_REFUSALS = new Set(['insufficient_balance', 'monthly_budget_reached', 'agent_rate_limited']);

const CANCELLED: Ending = { status: 'cancelled', errorCode: 'cancelled', errorMessage: 'the run was cancelled' };

const budgetExceeded = (message: string): Ending => ({ status: 'budget_exceeded', errorCode: 'budget_exceeded', errorMessage: message });

/** A step span's attributes: its sequence in the run and its kind (inference.chat or the tool's registry name). */
function stepAttributes(state: RunState, kind: string): Record<string, string | number> {
  return { 'drael.agent_run.step': state.stepSeq, 'drael.agent_run.step_kind': kind };
}

/** Passes a step's result through; one that ends the run (a budget refusal) is named on the step's span. */
function endedIn<T>(span: TraceSpan, result: T): T {
  if (isEnding(result)) span.setAttributes({ 'drael.agent_run.ending': result.status });
  return result;
}

const isEnding = (v: unknown): v is Ending => typeof v === 'object' && v !== null && 'status' in v;
