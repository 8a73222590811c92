import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { agentRunCatalog, billingCatalog } from '@drael/contracts';
import { wireSubject } from '@drael/nats-rpc';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaService } from '../src/db/prisma.service.js';
import { ClaimLostError, RunRepository } from '../src/runs/run.repository.js';
import { QUEUE_NAME, redisConnection } from '../src/queue/run.queue.js';
import { ReceiptSigner } from '@drael/receipts';
import { verifyReceipts } from '../src/receipts/receipt-verifier.js';
import { account, startStack, type Stack } from './harness.js';

let stack: Stack;
let repo: RunRepository;
let prisma: ReturnType<typeof createPrisma>;

beforeAll(async () => {
  stack = await startStack({ workers: 0 });
  prisma = createPrisma(stack.db.url, 12);
  repo = new RunRepository({ client: prisma } as PrismaService);
}, 120_000);
// Each test's workers answer the agent-run NATS subjects: none may outlive its test.
afterEach(async () => {
  await Promise.all(stack.workers.splice(0).map((w) => w.stop('SIGKILL')));
});
afterAll(async () => {
  await prisma?.$disconnect();
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The run's final state and receipt check straight from the database (no worker left to ask). */
async function fromDatabase(runId: string) {
  const [run] = await stack.db.query<{ status: string; error_code: string | null; output: string | null; receipt_count: number; run_end: unknown }>(
    'SELECT status, error_code, output, receipt_count, run_end FROM runs WHERE id = $1',
    [runId],
  );
  const receipts = await stack.db.query<{ payload: unknown; hash: string; key_id: string; signature: string }>(
    'SELECT payload, hash, key_id, signature FROM receipts WHERE run_id = $1 ORDER BY sequence',
    [runId],
  );
  const verified = verifyReceipts({ run_id: runId, receipts, run_end: run!.run_end }, [{ key_id: 'k1', public_key: new ReceiptSigner(stack.receiptKey, 'k1').publicKey }]);
  return { run: run!, verified };
}

async function parkedRun(accountId = account()): Promise<string> {
  const agentId = `agent_${randomBytes(6).toString('hex')}`;
  await prisma.agent.create({ data: { id: agentId, accountId, name: 'a', model: 'm', instructions: 'x', tools: [], stepLimit: 5, budgetMicros: 1_000 } });
  const id = `run_${randomBytes(6).toString('hex')}`;
  await repo.create({ id, accountId, agentId, model: 'm', tools: [], stepLimit: 5, budgetMicros: 1_000, task: 'x', salt: new Uint8Array(32) }, 100);
  return id;
}

const step = (sequence: number, costMicros = 10) => ({
  sequence,
  kind: 'inference.chat',
  status: 'ok' as const,
  costMicros,
  isModelCall: true,
  receiptsBefore: sequence,
  detail: {},
  createdAt: new Date(),
  event: {},
});

describe('the claim, decided by the database', () => {
  it('lets exactly one of many concurrent claimers win', async () => {
    const id = await parkedRun();
    const results = await Promise.all(Array.from({ length: 10 }, () => repo.claim({ runId: id, token: randomUUID() }, 30_000, 10)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("takes at most the account's cap of runs running, however many claimers race (replicas); the rest stay queued", async () => {
    const acct = account();
    const ids = await Promise.all(Array.from({ length: 8 }, () => parkedRun(acct)));
    const other = await parkedRun();
    const results = await Promise.all(ids.map((id) => repo.claim({ runId: id, token: randomUUID() }, 30_000, 3)));
    expect(results.filter((r) => r !== null && r !== 'account_busy')).toHaveLength(3);
    expect(results.filter((r) => r === 'account_busy')).toHaveLength(5);
    const rows = await stack.db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM runs WHERE account_id = $1 GROUP BY status ORDER BY status', [acct]);
    expect(rows).toEqual([
      { status: 'queued', n: 5 },
      { status: 'running', n: 3 },
    ]);
    // Another account is not held back by this one's cap.
    expect(await repo.claim({ runId: other, token: randomUUID() }, 30_000, 3)).toMatchObject({ id: other, status: 'running' });
  });

  it('refuses to queue past the account cap, however many creators race; nothing past it is written', async () => {
    const acct = account();
    const agentId = `agent_${randomBytes(6).toString('hex')}`;
    await prisma.agent.create({ data: { id: agentId, accountId: acct, name: 'a', model: 'm', instructions: 'x', tools: [], stepLimit: 5, budgetMicros: 1_000 } });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        repo.create(
          { id: `run_${randomBytes(6).toString('hex')}`, accountId: acct, agentId, model: 'm', tools: [], stepLimit: 5, budgetMicros: 1_000, task: 'x', salt: new Uint8Array(32) },
          4,
        ),
      ),
    );
    expect(results.filter((r) => r === 'queue_full')).toHaveLength(6);
    expect(await stack.db.query('SELECT 1 FROM runs WHERE account_id = $1', [acct])).toHaveLength(4);
  });

  it('rejects every late write of a worker whose lease lapsed, and lets it be reaped', async () => {
    const id = await parkedRun();
    const stalled = { runId: id, token: randomUUID() };
    expect(await repo.claim(stalled, 300, 10)).not.toBeNull();
    await repo.recordStep(stalled, step(0));
    await sleep(700); // the worker stalls past its lease

    expect(await repo.heartbeat(stalled, 300)).toBe(false);
    await expect(repo.recordStep(stalled, step(1))).rejects.toBeInstanceOf(ClaimLostError);
    expect(await repo.claim({ runId: id, token: randomUUID() }, 300, 10)).toBeNull(); // never claimed twice
    expect(await repo.reap(id, stalled.token, { sealed: true })).toBe(true);
    await expect(repo.finish(stalled, { status: 'succeeded', output: null, errorCode: null, errorMessage: null, runEnd: {} })).rejects.toBeInstanceOf(ClaimLostError);

    const run = await repo.findById(id);
    expect(run).toMatchObject({ status: 'failed', errorCode: 'worker_lost', stepCount: 1, spentMicros: 10, claimToken: null });
    expect(await repo.steps(id)).toHaveLength(1);
  });

  it('never queues again a run asked to cancel (a queued run so flagged is never claimed): neither its own worker nor a reaper', async () => {
    const ownAccount = account();
    const own = await parkedRun(ownAccount);
    const claim = { runId: own, token: randomUUID() };
    await repo.claim(claim, 30_000, 10);
    await repo.requestCancel(account(), own); // another account: nothing happens
    expect(await repo.requeue(claim)).toBe(true);
    expect(await repo.claim(claim, 30_000, 10)).not.toBeNull();
    await repo.requestCancel(ownAccount, own);
    expect(await repo.requeue(claim)).toBe(false);

    const lostAccount = account();
    const lost = await parkedRun(lostAccount);
    const stale = { runId: lost, token: randomUUID() };
    await repo.claim(stale, 300, 10);
    await repo.requestCancel(lostAccount, lost);
    await sleep(700);
    expect(await repo.requeueLost(lost, stale.token)).toBe(false);
    expect(await repo.findById(lost)).toMatchObject({ status: 'running', cancelRequested: true, resumes: 0 });
  });

  it('never writes a step sequence twice, and never spends past the budget', async () => {
    const id = await parkedRun();
    const claim = { runId: id, token: randomUUID() };
    await repo.claim(claim, 30_000, 10);
    await repo.recordStep(claim, step(0, 600));
    await expect(repo.recordStep(claim, step(0, 1))).rejects.toBeInstanceOf(ClaimLostError);
    // 600 + 401 > 1,000: the database's CHECK refuses it even if the worker's arithmetic were wrong.
    await expect(repo.recordStep(claim, step(1, 401))).rejects.toThrow();
    expect((await repo.findById(id))?.spentMicros).toBe(600);
  });
});

describe('workers (built agent-run processes)', { timeout: 180_000 }, () => {
  const text = (content: string, extra = {}) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 }, ...extra });

  it('executes a run once when its job is delivered to two workers', async () => {
    const queuePrefix = `drael-test:${stack.prefix}:dup`;
    const env = { AGENT_RUN_QUEUE_PREFIX: queuePrefix };
    const [w1, w2] = await Promise.all([stack.startWorker(env), stack.startWorker(env)]);
    const acct = await stack.account();
    stack.upstream.setTurns([text('one', { headersDelayMs: 1_000 }), text('two')]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    // A second job for the same run (as a redelivery or a double submit would make).
    const queue = new Queue(QUEUE_NAME, { connection: redisConnection(stack.env.REDIS_URL!), prefix: queuePrefix });
    await queue.add('run', { run_id: created.id }, { jobId: `${created.id}-again` });
    await queue.add('run', { run_id: created.id }, { jobId: `${created.id}-third` });
    const run = await stack.waitForRun(acct, created.id);
    await sleep(500);
    await queue.close();
    expect(run).toMatchObject({ status: 'succeeded', output: 'one', receipt_count: 1 });
    expect(stack.upstream.requests.length - start).toBe(1);
    expect(await stack.db.query('SELECT 1 FROM receipts WHERE run_id = $1', [created.id])).toHaveLength(1);
    await Promise.all([w1.stop('SIGKILL'), w2.stop('SIGKILL')]);
  });

  /**
   * A run whose worker is SIGKILLed during its second model call (after a tool step), then another
   * worker started: what the run came to. The third turn is what a resumed run's call gets.
   */
  async function killedDuringSecondCall(env: Record<string, string>, thirdTurn: string) {
    const a = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ name: 'no_such_tool', arguments: '{}' }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
      text('cut off by the kill', { headersDelayMs: 30_000 }),
      text(thirdTurn),
    ]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 2, 30_000); // the second model call is in flight
    await a.stop('SIGKILL');
    const b = await stack.startWorker(env);
    return { acct, created, start, b, run: await stack.waitForRun(acct, created.id, 60_000) };
  }

  it('a worker killed mid-run, resumes off (AGENT_RUN_MAX_RESUMES=0): the run is not executed again and gets no second set of receipts', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:kill`, AGENT_RUN_LEASE_MS: '1500', AGENT_RUN_MAX_RESUMES: '0' };
    const { acct, created, start, b, run } = await killedDuringSecondCall(env, 'never');
    expect(run).toMatchObject({ status: 'failed', error: { code: 'worker_lost' }, receipt_count: 1 });
    expect(stack.upstream.requests.length - start).toBe(2);
    const verified = await stack.call('verifyRun', { account_id: acct, run_id: created.id });
    expect(verified).toMatchObject({ valid: true, receipt_count: 1 });
    // The reservation of the model call cut off by the kill returned when the run ended, not after its 900 s ttl.
    const holds = await stack.billingDb.query<{ status: string }>('SELECT status FROM spend_holds WHERE run_id = $1 ORDER BY created_at', [created.id]);
    expect(holds.map((h) => h.status)).toEqual(['settled', 'released']);
    await b.stop('SIGKILL');
  });

  it('a worker killed mid-run: another worker resumes the run from its last step, and nothing is charged twice', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:resume`, AGENT_RUN_LEASE_MS: '1500' };
    const { acct, created, start, b, run } = await killedDuringSecondCall(env, 'resumed');
    expect(run).toMatchObject({ status: 'succeeded', output: 'resumed', step_count: 3, receipt_count: 2, error: null });
    // The model call cut off was made again, with the whole conversation so far (the reply and the tool's answer).
    expect(stack.upstream.requests.length - start).toBe(3);
    const again = stack.upstream.requests.at(-1)!.body.messages as Array<{ role: string; tool_calls?: unknown[]; content: string | null }>;
    expect(again.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(again[3]!.content).toMatch(/unknown_tool/);
    expect(await stack.call('verifyRun', { account_id: acct, run_id: created.id })).toMatchObject({ valid: true, receipt_count: 2 });
    // Charged: the first call and the call made again; the cut call's reservation returned when the run ended.
    const holds = await stack.billingDb.query<{ status: string; settled_micros: string | null }>(
      'SELECT status, settled_micros FROM spend_holds WHERE run_id = $1 ORDER BY created_at',
      [created.id],
    );
    expect(holds.map((h) => h.status)).toEqual(['settled', 'released', 'settled']);
    const receipts = await stack.db.query<{ cost: string }>(`SELECT payload->>'cost_micros' AS cost FROM receipts WHERE run_id = $1`, [created.id]);
    expect(receipts.reduce((sum, r) => sum + Number(r.cost), 0)).toBe(holds.reduce((sum, h) => sum + Number(h.settled_micros ?? 0), 0));
    const [row] = await stack.db.query<{ resumes: number }>('SELECT resumes FROM runs WHERE id = $1', [created.id]);
    expect(row!.resumes).toBe(1);
    const statuses = await stack.db.query<{ status: string }>(`SELECT data->>'status' AS status FROM run_events WHERE run_id = $1 AND type = 'run.status' ORDER BY seq`, [
      created.id,
    ]);
    expect(statuses.map((e) => e.status)).toEqual(['queued', 'running', 'queued', 'running', 'succeeded']);
    await b.stop('SIGKILL');
  });

  it("a worker killed between billing's settle and its own write: the receipt billing issued is written, the run resumes and ends with that answer, and no money stays held", async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:adopt`, AGENT_RUN_LEASE_MS: '1500' };
    const a = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([text('answered while billing is frozen', { headersDelayMs: 1_500 })]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 1, 30_000); // reserved in billing; the model call in flight
    // Billing frozen: the step's settle waits unread in its socket. The worker dies once it has
    // sent it (the test hears a copy on the subject), and billing, resumed, charges the step and
    // signs its receipt for a worker that is gone.
    const settles = stack.rpc.connection.subscribe(wireSubject(billingCatalog.settleSpend.subject, stack.prefix), { max: 1 });
    await stack.rpc.connection.flush();
    const billingPid = stack.billing.child.pid!;
    process.kill(billingPid, 'SIGSTOP');
    try {
      const sent = (async () => {
        for await (const _ of settles) return true;
        return false;
      })();
      expect(await Promise.race([sent, new Promise<false>((r) => setTimeout(r, 30_000, false))])).toBe(true);
      await a.stop('SIGKILL');
    } finally {
      process.kill(billingPid, 'SIGCONT');
    }
    const spend = () => stack.billingDb.query<{ status: string; settled_micros: string | null }>('SELECT status, settled_micros FROM spend_holds WHERE run_id = $1', [created.id]);
    await expect.poll(async () => (await spend()).map((h) => h.status), { timeout: 20_000 }).toEqual(['settled']);

    const b = await stack.startWorker(env);
    const run = await stack.waitForRun(acct, created.id, 60_000);
    // The model's answer was in the step the reaper wrote: the resumed run ends with it, asking the model nothing.
    expect(run).toMatchObject({ status: 'succeeded', output: 'answered while billing is frozen', receipt_count: 1, step_count: 1 });
    expect(stack.upstream.requests.length - start).toBe(1);
    expect(await stack.call('verifyRun', { account_id: acct, run_id: created.id })).toMatchObject({ valid: true, receipt_count: 1 });
    // What the receipts say the run cost is what billing charged for it, and nothing is left held.
    const receipts = await stack.db.query<{ cost: string }>(`SELECT payload->>'cost_micros' AS cost FROM receipts WHERE run_id = $1`, [created.id]);
    const charged = (await spend()).reduce((sum, h) => sum + Number(h.settled_micros ?? 0), 0);
    expect(receipts.reduce((sum, r) => sum + Number(r.cost), 0)).toBe(charged);
    expect(charged).toBeGreaterThan(0);
    expect((await spend()).filter((h) => h.status === 'held')).toEqual([]);
    await b.stop('SIGKILL');
  });

  it('graceful shutdown lets a run in progress finish while still answering reads, then exits 0', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:drain`, AGENT_RUN_DRAIN_MS: '30000' };
    const w = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([text('finished while draining', { headersDelayMs: 4_000 })]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 1, 30_000);
    const stopped = w.stop('SIGTERM');
    // The only replica, draining: it still answers a read of the run it is finishing (no other
    // replica could; before, its subjects closed at SIGTERM and every read was 503 for the drain).
    await new Promise((r) => setTimeout(r, 500));
    expect(w.child.exitCode).toBeNull();
    const during = await stack.rpc.request(agentRunCatalog.getRun, { account_id: acct, run_id: created.id }, { timeoutMs: 2_000 });
    expect(during.status).toBe('running');
    expect(await stopped).toBe(0);
    const { run, verified } = await fromDatabase(created.id);
    expect(run).toMatchObject({ status: 'succeeded', error_code: null, receipt_count: 1 });
    expect(run.output).toMatch(/^enc1:/);
    expect(verified.valid).toBe(true);
  });

  it('graceful shutdown past its drain time queues the run again, and the next worker resumes it', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:drain3`, AGENT_RUN_DRAIN_MS: '200' };
    const w = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([text('too slow', { headersDelayMs: 30_000 }), text('resumed elsewhere')]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 1, 30_000);
    expect(await w.stop('SIGTERM')).toBe(0);
    const [queued] = await stack.db.query<{ status: string; resumes: number; claim_token: string | null }>('SELECT status, resumes, claim_token FROM runs WHERE id = $1', [
      created.id,
    ]);
    expect(queued).toEqual({ status: 'queued', resumes: 1, claim_token: null });

    const next = await stack.startWorker(env);
    const run = await stack.waitForRun(acct, created.id, 60_000);
    expect(run).toMatchObject({ status: 'succeeded', output: 'resumed elsewhere', receipt_count: 1, step_count: 1 });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: created.id })).valid).toBe(true);
    const holds = await stack.billingDb.query<{ status: string }>('SELECT status FROM spend_holds WHERE run_id = $1 ORDER BY created_at', [created.id]);
    expect(holds.map((h) => h.status)).toEqual(['released', 'settled']);
    await next.stop('SIGKILL');
  });

  it('a run queued again with receipts, then cancelled: its run end covers those receipts', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:drain4`, AGENT_RUN_DRAIN_MS: '200' };
    const w = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ name: 'no_such_tool', arguments: '{}' }], usage: { prompt_tokens: 10, completion_tokens: 5 } },
      text('too slow', { headersDelayMs: 30_000 }),
    ]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 2, 30_000);
    expect(await w.stop('SIGTERM')).toBe(0);
    // Answered by a replica that executes nothing (no worker is left): the queued run is cancelled there and then.
    const reader = await stack.startWorker({ ...env, AGENT_RUN_CONCURRENCY: '1', AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:drain4-elsewhere` });
    expect(await stack.call('cancelRun', { account_id: acct, run_id: created.id })).toMatchObject({ status: 'cancelled', receipt_count: 1 });
    expect(await stack.call('verifyRun', { account_id: acct, run_id: created.id })).toMatchObject({ valid: true, receipt_count: 1 });
    await reader.stop('SIGKILL');
  });

  it('a run is resumed at most AGENT_RUN_MAX_RESUMES times: stopped once more, it ends failed', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:bound`, AGENT_RUN_DRAIN_MS: '200', AGENT_RUN_MAX_RESUMES: '1' };
    const first = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([text('slow', { headersDelayMs: 30_000 }), text('slow again', { headersDelayMs: 30_000 })]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 1, 30_000);
    expect(await first.stop('SIGTERM')).toBe(0);
    const second = await stack.startWorker(env);
    await stack.upstream.waitForRequests(start + 2, 30_000);
    expect(await second.stop('SIGTERM')).toBe(0);
    const { run, verified } = await fromDatabase(created.id);
    expect(run).toMatchObject({ status: 'failed', error_code: 'interrupted', receipt_count: 0 });
    expect(verified.valid).toBe(true);
  });

  it('graceful shutdown past its drain time, resumes off: the run stops as failed, with a valid signed chain', async () => {
    const env = { AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:drain2`, AGENT_RUN_DRAIN_MS: '200', AGENT_RUN_MAX_RESUMES: '0' };
    const w = await stack.startWorker(env);
    const acct = await stack.account();
    stack.upstream.setTurns([text('too slow', { headersDelayMs: 30_000 })]);
    const start = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(start + 1, 30_000);
    expect(await w.stop('SIGTERM')).toBe(0);
    const { run, verified } = await fromDatabase(created.id);
    expect(run).toMatchObject({ status: 'failed', error_code: 'interrupted', receipt_count: 0 });
    expect(verified.valid).toBe(true);
  });

  it('stops a run at its wall-clock limit (shortened here) with status timed_out', async () => {
    const w = await stack.startWorker({ AGENT_RUN_QUEUE_PREFIX: `drael-test:${stack.prefix}:clock`, AGENT_RUN_WALL_CLOCK_MS: '1500' });
    const acct = await stack.account();
    stack.upstream.setTurns([text('slow', { headersDelayMs: 30_000 })]);
    const agent = await stack.createAgent(acct);
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' })).id);
    expect(run).toMatchObject({ status: 'timed_out', error: { code: 'timed_out' } });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
    await w.stop('SIGKILL');
  });
});
