import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunCatalog } from '@drael/contracts';
import { startOwnRedis, type OwnServer } from '@drael/test-support';
import { startStack, type Stack } from './harness.js';

// Issue 19, item 3: a run whose BullMQ job is gone does not stay `queued` forever. The job is lost
// the way production loses one: the replica crashes mid-enqueue (Redis unreachable at that moment)
// and Redis comes back empty (no persistence). The Redis is the test's own, on its own port.

const text = (content: string) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 } });
let redis: OwnServer;
let stack: Stack;

beforeAll(async () => {
  redis = await startOwnRedis();
  stack = await startStack({ workerEnv: { REDIS_URL: redis.url, AGENT_RUN_RECONCILE_MS: '500', AGENT_RUN_RECONCILE_AFTER_MS: '200' } });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await redis?.dispose();
});

describe('the reconciler', () => {
  it('gives a queued run whose job was lost a job again, and the run executes once to a final status', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct);
    stack.upstream.setTurns([text('done after a lost job')]);

    // Redis away: the run's row is written, its job cannot be. The caller still gets its run at
    // once (a timeout would hide a run it created, and a retry would make another). The replica
    // then dies with the job's add still waiting in its connection.
    await redis.stop();
    const created = await stack.rpc.request(
      agentRunCatalog.createRun,
      { account_id: acct, agent_id: agent.id, task: 'survive a lost job', tool_level: 'l4_browser' },
      { timeoutMs: 3_000 },
    );
    expect(created).toMatchObject({ status: 'queued' });
    const [row] = await stack.db.query<{ id: string; status: string }>(`SELECT "id", "status" FROM "runs" WHERE "account_id" = $1`, [acct]);
    expect(row).toMatchObject({ id: created.id, status: 'queued' });
    await stack.workers[0]!.stop('SIGKILL');

    // Redis back, empty; a new replica. Nothing but the reconciler knows the run is waiting.
    await redis.start();
    const replica = await stack.startWorker();
    const run = await stack.waitForRun(acct, row!.id, 90_000);
    expect(run.status).toBe('succeeded');
    expect(replica.output()).toContain('queued run had no job: enqueued again');
    const steps = await stack.db.query<{ n: string }>(`SELECT count(*) AS n FROM "steps" WHERE "run_id" = $1`, [row!.id]);
    expect(Number(steps[0]!.n)).toBe(1);
  }, 180_000);

  it('a run created while Redis is away is answered at once and runs exactly once when Redis is back, on the same replica', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct);
    stack.upstream.setTurns([text('done once')]);
    await redis.stop();
    const created = await stack.rpc.request(
      agentRunCatalog.createRun,
      { account_id: acct, agent_id: agent.id, task: 'wait for redis', tool_level: 'l4_browser' },
      { timeoutMs: 3_000 },
    );
    expect(created).toMatchObject({ status: 'queued' });
    await redis.start();
    const run = await stack.waitForRun(acct, created.id, 90_000);
    expect(run.status).toBe('succeeded');
    const runs = await stack.db.query<{ n: string }>(`SELECT count(*) AS n FROM "runs" WHERE "account_id" = $1`, [acct]);
    expect(Number(runs[0]!.n)).toBe(1);
    const steps = await stack.db.query<{ n: string }>(`SELECT count(*) AS n FROM "steps" WHERE "run_id" = $1`, [created.id]);
    expect(Number(steps[0]!.n)).toBe(1);
  }, 180_000);
});
