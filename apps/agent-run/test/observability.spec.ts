import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { agentRunCatalog } from '@drael/contracts';
import { sampleValue } from '@drael/metrics';
import { wireSubject } from '@drael/nats-rpc';
import { freePort, scrapeMetrics, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@drael/test-support';
import { currentTraceId, inSpan, startTracing, stopTracing } from '@drael/tracing';
import { redisConnection, QUEUE_NAME } from '../src/queue/run.queue.js';
import { startStack, type Stack } from './harness.js';

// Issue 18, agent-run: after real runs through the real stack (billing, the gateway's inference
// subject in front of a scripted model, agent-run as built), its /metrics (health port) moved by
// exactly what the runs did, and each run is one trace: the run's span restored from the trace of
// the request that created it, a span per step under it. This test process traces too (service
// drael-test), so the createRun request carries its span as `traceparent`, as the gateway's does.

let stack: Stack;
let receiver: OtlpReceiver;
let metricsUrl = '';
const text = (content: string) => ({ type: 'text' as const, content, usage: { prompt_tokens: 20, completion_tokens: 5 } });

/** Scrapes before `act`, then polls until `settled` holds for the moves (a run's counters move once its worker has finished it). */
async function delta(act: () => Promise<void>, settled: (d: (name: string, labels?: Record<string, string>) => number) => boolean) {
  const before = await scrapeMetrics(metricsUrl);
  await act();
  let d!: (name: string, labels?: Record<string, string>) => number;
  await expect
    .poll(
      async () => {
        const after = await scrapeMetrics(metricsUrl);
        d = (name, labels = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
        return settled(d);
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return d;
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  await startTracing({ service: 'test', endpoint: receiver.url, scheduleDelayMs: 100 });
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}`;
  stack = await startStack({ workerEnv: { HEALTH_PORT: String(port), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' } });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await stopTracing();
  await receiver?.close();
}, 60_000);

describe('agent-run metrics after real runs', () => {
  it('a run that succeeds: counted by status, its one step by kind', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('done')]);
    const agent = await stack.createAgent(acct, { tools: [] });
    const d = await delta(
      async () => {
        const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'finish' })).id);
        expect(run.status).toBe('succeeded');
      },
      (d) => d('drael_agent_run_runs_total') >= 1,
    );
    expect(d('drael_agent_run_runs_total', { status: 'succeeded' })).toBe(1);
    expect(d('drael_agent_run_runs_total')).toBe(1);
    expect(d('drael_agent_run_step_duration_seconds_count', { kind: 'inference.chat' })).toBe(1);
    expect(d('drael_agent_run_step_duration_seconds_count')).toBe(1);
    expect(d('drael_agent_run_budget_refusals_total')).toBe(0);
    expect(d('drael_rpc_client_request_duration_seconds_count', { subject: 'gateway.inference.chat.v1', outcome: 'ok' })).toBe(1);
  });

  it("a run its own budget refuses, and one the account's balance refuses: each counted by its reason, no step", async () => {
    const acct = await stack.account();
    // 1,000 µ$ pays the least model call (so the run is accepted), not the first call's reservation (about 16,000 µ$).
    const poor = await stack.account(0.001);
    const before = stack.upstream.requests.length;
    // 100 µ$ cannot pay 64 output tokens at 4 µ$ each, whatever the prompt.
    const tight = await stack.createAgent(acct, { tools: [], limits: { step_limit: 5, budget_usd: 0.0001 } });
    const agent = await stack.createAgent(poor, { tools: [] });
    const d = await delta(
      async () => {
        const a = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: tight.id, task: 'too dear' })).id);
        expect(a).toMatchObject({ status: 'budget_exceeded', error: { code: 'budget_exceeded' } });
        const b = await stack.waitForRun(poor, (await stack.call('createRun', { account_id: poor, agent_id: agent.id, task: 'no money' })).id);
        expect(b).toMatchObject({ status: 'budget_exceeded', error: { code: 'insufficient_balance' } });
      },
      (d) => d('drael_agent_run_runs_total') >= 2,
    );
    expect(d('drael_agent_run_runs_total', { status: 'budget_exceeded' })).toBe(2);
    expect(d('drael_agent_run_budget_refusals_total', { reason: 'budget_exceeded' })).toBe(1);
    expect(d('drael_agent_run_budget_refusals_total', { reason: 'insufficient_balance' })).toBe(1);
    expect(d('drael_agent_run_step_duration_seconds_count')).toBe(0);
    expect(stack.upstream.requests.length).toBe(before);
  });

  it('queue depth: delayed jobs in the run queue are counted by state, read at scrape time', async () => {
    const queue = new Queue(QUEUE_NAME, { connection: redisConnection(stack.env.REDIS_URL!), prefix: stack.env.AGENT_RUN_QUEUE_PREFIX! });
    // Jobs of runs that do not exist, an hour out: they stay delayed while the test looks.
    const ids = [0, 1].map(() => `run_obs_${randomBytes(6).toString('hex')}`);
    try {
      const d = await delta(
        async () => {
          for (const id of ids) await queue.add('run', { run_id: id }, { jobId: id, delay: 3_600_000 });
        },
        (d) => d('drael_agent_run_queue_jobs', { state: 'delayed' }) === 2,
      );
      expect(d('drael_agent_run_queue_jobs', { state: 'delayed' })).toBe(2);
      const gone = await delta(
        async () => {
          for (const id of ids) await (await queue.getJob(id))?.remove();
        },
        (d) => d('drael_agent_run_queue_jobs', { state: 'delayed' }) === -2,
      );
      expect(gone('drael_agent_run_queue_jobs', { state: 'delayed' })).toBe(-2);
    } finally {
      for (const id of ids) await (await queue.getJob(id))?.remove();
      await queue.close();
    }
  });
});

describe('agent-run traces', () => {
  /** Every span of `traceId` once the run's span and the steps it names have arrived. */
  async function runTrace(traceId: string, steps: number): Promise<ReceivedSpan[]> {
    const all = await receiver.waitFor((spans) => {
      const mine = spans.filter((s) => s.traceId === traceId);
      return mine.some((s) => s.name === 'agent run') && mine.filter((s) => s.name.startsWith('step ')).length >= steps;
    }, 60_000);
    return all.filter((s) => s.traceId === traceId);
  }

  it("a run's execution joins the trace of the request that created it: run span under the create handler, a span per step under it", async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('traced')]);
    const agent = await stack.createAgent(acct, { tools: [] });
    const { traceId, runId } = await inSpan('client', {}, async () => ({
      traceId: currentTraceId()!,
      runId: (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'trace me' })).id,
    }));
    expect((await stack.waitForRun(acct, runId)).status).toBe('succeeded');
    const spans = await runTrace(traceId, 1);

    const create = spans.find((s) => s.service === 'drael-agent-run' && s.kind === 'server' && s.name === agentRunCatalog.createRun.subject)!;
    expect(create).toBeDefined();
    const run = spans.find((s) => s.name === 'agent run')!;
    expect(run).toMatchObject({ service: 'drael-agent-run', kind: 'consumer', parentSpanId: create.spanId });
    expect(run.attributes).toMatchObject({ 'drael.agent_run.id': runId, 'drael.agent_run.status': 'succeeded', 'drael.agent_run.steps': 1 });
    const step = spans.find((s) => s.name === 'step inference.chat')!;
    expect(step.parentSpanId).toBe(run.spanId);
    expect(step.attributes).toMatchObject({ 'drael.agent_run.step': 0, 'drael.agent_run.step_kind': 'inference.chat' });
    // The step's model call goes over NATS to the gateway as the step's child.
    const inference = spans.find((s) => s.kind === 'client' && s.name === 'gateway.inference.chat.v1')!;
    expect(inference.parentSpanId).toBe(step.spanId);
  });

  it('a run created by a request that carried no traceparent is a trace of its own, rooted at its create handler', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('untraced')]);
    const agent = await stack.createAgent(acct, { tools: [] });
    // A plain JSON request without the header, as any NATS client may send.
    const body = { account_id: acct, agent_id: agent.id, tool_level: 'l4_browser', task: 'no header' };
    const msg = await stack.rpc.connection.request(wireSubject(agentRunCatalog.createRun.subject, stack.prefix), JSON.stringify(body), { timeout: 30_000 });
    const runId = msg.json<{ result: { id: string } }>().result.id;
    expect((await stack.waitForRun(acct, runId)).status).toBe('succeeded');
    const found = await receiver.waitFor((spans) => spans.some((s) => s.name === 'agent run' && s.attributes['drael.agent_run.id'] === runId), 60_000);
    const traceId = found.find((s) => s.name === 'agent run' && s.attributes['drael.agent_run.id'] === runId)!.traceId;
    const spans = await runTrace(traceId, 1);
    const create = spans.find((s) => s.kind === 'server' && s.name === agentRunCatalog.createRun.subject)!;
    expect(create.parentSpanId).toBe('');
    expect(spans.find((s) => s.name === 'agent run')!.parentSpanId).toBe(create.spanId);
    // Nothing of the test process is in it: the request carried no trace.
    expect(spans.filter((s) => s.service === 'drael-test')).toEqual([]);
  });
});
