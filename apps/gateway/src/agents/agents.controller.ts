import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { agentRunCatalog, billingCatalog, AgentCreateBodySchema, AgentUpdateBodySchema, type KeyIdentity, type Run } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { CallerIdentity } from '../auth/identity.js';
import { ApiError } from '../errors/api-error.js';
import { validateBody } from '../openai/validate.js';

const RunCreateBodySchema = z.object({ task: z.string() }).strict();
const ListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  before: z.string().max(64).optional(),
  agent_id: z.string().max(64).optional(),
});

/**
 * Hosted agents and runs (spec 03), scoped to the calling key's account: another account's agent or
 * run is "not found". agent-run owns the data and the queue; this is the HTTP face over NATS.
 */
@Controller('v1')
export class AgentsController {
  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

  @Post('agents')
  async createAgent(@CallerIdentity() caller: KeyIdentity, @Body() body: unknown) {
    const agent = validateBody(AgentCreateBodySchema, body ?? {});
    return withObject('agent', await this.call('createAgent', { account_id: caller.account_id, agent }));
  }

  @Get('agents')
  async listAgents(@CallerIdentity() caller: KeyIdentity, @Query() query: unknown) {
    const q = validateBody(ListQuerySchema, query);
    const { agents } = await this.call('listAgents', { account_id: caller.account_id, limit: q.limit, before: q.before });
    return { object: 'list', data: agents.map((a) => withObject('agent', a)) };
  }

  @Get('agents/:agent_id')
  async getAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string) {
    return withObject('agent', await this.call('getAgent', { account_id: caller.account_id, agent_id: agentId }));
  }

  @Patch('agents/:agent_id')
  async updateAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string, @Body() body: unknown) {
    const patch = validateBody(AgentUpdateBodySchema, body ?? {});
    return withObject('agent', await this.call('updateAgent', { account_id: caller.account_id, agent_id: agentId, patch }));
  }

  @Delete('agents/:agent_id')
  async deleteAgent(@CallerIdentity() caller: KeyIdentity, @Param('agent_id') agentId: string) {
    return withObject('agent.deleted', await this.call('deleteAgent', { account_id: caller.account_id, agent_id: agentId }));
  }

  @Post('agents/:agent_id/runs')
  @HttpCode(202)
  async createRun(
    @CallerIdentity() caller: KeyIdentity,
    @Param('agent_id') agentId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey?: string,
  ) {
    const { task } = validateBody(RunCreateBodySchema, body ?? {});
    const key = idempotencyKey?.trim() ? idempotencyKey.trim().slice(0, 200) : undefined;
    return runObject(await this.call('createRun', { account_id: caller.account_id, agent_id: agentId, task, idempotency_key: key }));
  }

  @Get('runs')
  async listRuns(@CallerIdentity() caller: KeyIdentity, @Query() query: unknown) {
    const q = validateBody(ListQuerySchema, query);
    const { runs } = await this.call('listRuns', { account_id: caller.account_id, limit: q.limit, before: q.before, agent_id: q.agent_id });
    return { object: 'list', data: runs.map(runObject) };
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
   * client that reconnects sends Last-Event-ID and gets only what it missed.
   */
  @Get('runs/:run_id/events')
  async events(
    @CallerIdentity() caller: KeyIdentity,
    @Param('run_id') runId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    let after = Number.parseInt(lastEventId ?? '0', 10);
    if (!Number.isFinite(after) || after < 0) after = 0;
    // Not found before any byte is written, so it is an ordinary JSON error.
    await this.call('getRun', { account_id: caller.account_id, run_id: runId });
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
    let open = true;
    res.once('close', () => (open = false));
    try {
      while (open) {
        const { events, done } = await this.call('runEvents', { account_id: caller.account_id, run_id: runId, after, wait_ms: 10_000 });
        for (const e of events) {
          res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);
          after = e.seq;
        }
        if (done) break;
        if (events.length === 0) res.write(': keep-alive\n\n');
      }
    } catch (err) {
      if (open) res.write(`event: error\ndata: ${JSON.stringify((ApiError.fromRpc(err) ?? new ApiError('internal', 'event stream failed')).toEnvelope())}\n\n`);
    }
    if (!res.destroyed) res.end();
  }

  private async call<K extends keyof typeof agentRunCatalog>(name: K, req: z.input<(typeof agentRunCatalog)[K]['request']>) {
    try {
      return (await this.nats.request(agentRunCatalog[name], req as never)) as z.output<(typeof agentRunCatalog)[K]['reply']>;
    } catch (err) {
      throw ApiError.fromRpc(err) ?? err;
    }
  }
}

const withObject = <T extends object>(object: string, v: T) => ({ object, ...v });
const runObject = (r: Run) => withObject('run', r);
