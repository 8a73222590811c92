import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  agentRunCatalog,
  billingCatalog,
  AgentCreateBodySchema,
  AgentIdSchema,
  AgentUpdateBodySchema,
  CursorPageSchema,
  MAX_INT4,
  taskProblem,
  type KeyIdentity,
  type Run,
} from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { CallerIdentity } from '../auth/identity.js';
import { KeyGate } from '../auth/key-gate.service.js';
import { ApiError } from '../errors/api-error.js';
import { apiErrorOf } from '../errors/error-response.js';
import { idempotencyKeyOf } from '../http/idempotency-key.js';
import { holdOpenStream } from '../http/open-streams.js';
import { ModelRegistry } from '../models/model-registry.js';
import { validateBody } from '../openai/validate.js';
import { RunEventStreams } from './run-event-streams.js';

export const RunCreateBodySchema = z.object({ task: z.string() }).strict();
// OpenAI's list parameters; the bounds and cursors are agent-run's own (one definition, in contracts).
export const AgentListQuerySchema = CursorPageSchema.extend({
  limit: z.coerce.number().pipe(CursorPageSchema.shape.limit.unwrap()).default(20),
  agent_id: AgentIdSchema.optional(),
});

/**
 * Hosted agents and runs (spec 03), scoped to the calling key's account: another account's agent or
 * run is "not found". agent-run owns the data and the queue; this is the HTTP face over NATS.
 */
@Controller('v1')
export class AgentsController {
  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(ModelRegistry) private readonly models: ModelRegistry,
    @Inject(KeyGate) private readonly keys: KeyGate,
    @Inject(RunEventStreams) private readonly streams: RunEventStreams,
  ) {}

  /**
   * The agent's tools are checked against the key's tool level by agent-run (403
   * tool_not_allowed); its model must be one of the configured aliases (404 model_not_found), or
   * every run of it would fail.
   */
  @Post('agents')
  async createAgent(@CallerIdentity() caller: KeyIdentity, @Body() body: unknown) {
    const agent = validateBody(AgentCreateBodySchema, body ?? {});
    this.models.resolve(agent.model);
    return withObject('agent', await this.call('createAgent', { account_id: caller.account_id, tool_level: caller.tool_level, agent }));
  }

  @Get('agents')
  async listAgents(@CallerIdentity() caller: KeyIdentity, @Query() query: unknown) {
    const { agent_id: _, ...page } = validateBody(AgentListQuerySchema, query ?? {});
    const { agents, has_more } = await this.call('listAgents', { account_id: caller.account_id, ...page });
    return listObject(
      agents.map((a) => withObject('agent', a)),
      has_more,
    );
  }

  @Get('agents/:agent_id')
  async getAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string) {
    return withObject('agent', await this.call('getAgent', { account_id: caller.account_id, agent_id: agentId }));
  }

  @Patch('agents/:agent_id')
  async updateAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string, @Body() body: unknown) {
    const patch = validateBody(AgentUpdateBodySchema, body ?? {});
    if (patch.model !== undefined) this.models.resolve(patch.model);
    return withObject('agent', await this.call('updateAgent', { account_id: caller.account_id, tool_level: caller.tool_level, agent_id: agentId, patch }));
  }

  @Delete('agents/:agent_id')
  async deleteAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string) {
    return withObject('agent.deleted', await this.call('deleteAgent', { account_id: caller.account_id, tool_level: caller.tool_level, agent_id: agentId }));
  }

  /**
   * Queues a run. The key that starts it must be allowed every tool of the agent (403
   * tool_not_allowed). An `Idempotency-Key` binds to this agent and task: the same request again
   * answers the first run, another one 409 idempotency_key_reused.
   */
  @Post('agents/:agent_id/runs')
  @HttpCode(202)
  async createRun(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string, @Body() body: unknown, @Headers('idempotency-key') idempotencyKey?: string) {
    const { task } = validateBody(RunCreateBodySchema, body ?? {});
    // Refused here, before a task of megabytes is sent over NATS (spec 03: 1–50,000 characters).
    const problem = taskProblem(task);
    if (problem) throw new ApiError('invalid_task', problem, 'task');
    const key = idempotencyKeyOf(idempotencyKey);
    return runObject(await this.call('createRun', { account_id: caller.account_id, agent_id: agentId, tool_level: caller.tool_level, task, idempotency_key: key }));
  }

  @Get('runs')
  async listRuns(@CallerIdentity() caller: KeyIdentity, @Query() query: unknown) {
    const q = validateBody(AgentListQuerySchema, query ?? {});
    const { runs, has_more } = await this.call('listRuns', { account_id: caller.account_id, ...q });
    return listObject(runs.map(runObject), has_more);
  }

  @Get('runs/:run_id')
  async getRun(@CallerIdentity() caller: KeyIdentity, @Param('run_id') runId: string) {
    return runObject(await this.call('getRun', { account_id: caller.account_id, run_id: runId }));
  }

  @Get('runs/:run_id/steps')
  async listSteps(@CallerIdentity() caller: KeyIdentity, @Param('run_id') runId: string) {
    const { steps } = await this.call('listSteps', { account_id: caller.account_id, run_id: runId });
    return { object: 'list', data: steps.map((s) => withObject('run.step', s)) };
  }

  /** The run's receipts, its signed run end and the public key: the input of `drael-receipts verify`. */
  @Get('runs/:run_id/receipts')
  async listReceipts(@CallerIdentity() caller: KeyIdentity, @Param('run_id') runId: string) {
    return this.call('listReceipts', { account_id: caller.account_id, run_id: runId });
  }

  @Get('runs/:run_id/verify')
  async verify(@CallerIdentity() caller: KeyIdentity, @Param('run_id') runId: string) {
    return this.call('verifyRun', { account_id: caller.account_id, run_id: runId });
  }

  @Post('runs/:run_id/cancel')
  @HttpCode(200)
  async cancel(@CallerIdentity() caller: KeyIdentity, @Param('run_id') runId: string) {
    return runObject(await this.call('cancelRun', { account_id: caller.account_id, run_id: runId }));
  }

  /** Billing signs agent receipts and run ends: its key is the one every verifier checks against. */
  @Get('receipts/public-key')
  async publicKey() {
    try {
      return await this.nats.request(billingCatalog.receiptKey, {});
    } catch (err) {
      throw ApiError.fromRpc(err) ?? err;
    }
  }

  /**
   * Server-sent events of a run: `run.step` per step, then `run.done`, then the stream ends. A
   * client that reconnects sends Last-Event-ID and gets only what it missed. An account holds at
   * most RUN_EVENT_STREAMS_PER_ACCOUNT open on this replica (429 too_many_event_streams past it).
   */
  @Get('runs/:run_id/events')
  async events(
    @CallerIdentity() caller: KeyIdentity,
    @Param('run_id') runId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    let after = resumePointOf(lastEventId);
    // A stream may stay open for the run's whole life: a key revoked meanwhile reads nothing more.
    const recheckKey = this.keys.recheckOf(req.headers);
    // Not found before any byte is written, so it is an ordinary JSON error.
    await this.call('getRun', { account_id: caller.account_id, run_id: runId });
    // Refused, like not found, before any byte; the place is given back when the client goes
    // (not when the long poll in flight then answers) or the stream ends, whichever is first.
    const giveBack = this.streams.take(caller.account_id);
    const res = reply.raw;
    // Aborted when the client goes or the stream is ended (its run done, an error, the gateway
    // closing): the long poll in flight is then given up, not waited for.
    const stop = new AbortController();
    const endWith = (error: ApiError) => {
      if (stop.signal.aborted) return;
      stop.abort();
      if (!res.destroyed && !res.writableEnded) res.end(`event: error\ndata: ${JSON.stringify(error.toEnvelope())}\n\n`);
    };
    res.once('close', () => {
      stop.abort();
      giveBack();
    });
    try {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      // Resumable with Last-Event-ID: a closing gateway ends it at once, with this error event.
      holdOpenStream(res, endWith, { resumable: true });
      while (!stop.signal.aborted) {
        const { events, done } = await this.call('runEvents', { account_id: caller.account_id, run_id: runId, after, wait_ms: 10_000 }, stop.signal);
        if (stop.signal.aborted) break;
        await recheckKey();
        for (const e of events) {
          res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);
          after = e.seq;
        }
        if (done) break;
        if (events.length === 0) res.write(': keep-alive\n\n');
      }
    } catch (err) {
      endWith(apiErrorOf(err));
    } finally {
      giveBack();
    }
    stop.abort();
    if (!res.destroyed && !res.writableEnded) res.end();
  }

  private async call<K extends keyof typeof agentRunCatalog>(name: K, req: z.input<(typeof agentRunCatalog)[K]['request']>, signal?: AbortSignal) {
    try {
      return (await this.nats.request(agentRunCatalog[name], req as never, signal && { signal })) as z.output<(typeof agentRunCatalog)[K]['reply']>;
    } catch (err) {
      throw ApiError.fromRpc(err) ?? err;
    }
  }
}

const withObject = <T extends object>(object: string, v: T) => ({ object, ...v });

/** OpenAI's list object: the page, the ids at its ends (the cursors of the next pages) and has_more. */
function listObject<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

const runObject = (r: Run) => withObject('run', r);

/**
 * Where a run's event stream resumes: after the Last-Event-ID the client sends back, which is one of
 * the ids this stream wrote (event sequence numbers, int4 in agent-run's database). Absent: from
 * the start. Anything else is refused before the stream starts (it used to reach the database and
 * end the stream with an internal error).
 */
function resumePointOf(lastEventId: string | undefined): number {
  if (lastEventId === undefined || lastEventId === '') return 0;
  const after = /^\d{1,10}$/.test(lastEventId) ? Number(lastEventId) : Number.NaN;
  if (!(after <= MAX_INT4)) throw new ApiError('invalid_request', 'Last-Event-ID must be the id of an event this stream sent (a whole number).', 'Last-Event-ID');
  return after;
}
