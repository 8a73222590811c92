import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRpcError } from '@drael/nats-rpc';
import type { Run } from '@drael/contracts';
import { startStack, type Stack } from './harness.js';

// Attack report F3: one account's slow runs held every worker slot, and another account's run
// waited for them. Now an account has at most AGENT_RUN_ACCOUNT_CONCURRENCY runs running (decided
// by the database at the claim, over every replica) and AGENT_RUN_ACCOUNT_MAX_QUEUED queued.

const SLOW_MS = 5_000;
const WORKER_SLOTS = 4;
const ACCOUNT_CAP = 2;
const MAX_QUEUED = 3;

let stack: Stack;
const text = (content: string, extra = {}) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 }, ...extra });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as the upstream received it
const taskOf = (body: any): string => String(body?.messages?.at(-1)?.content ?? '');

beforeAll(async () => {
  stack = await startStack({
    // A task saying "slow" takes SLOW_MS at the model; any other answers at once.
    choose: (body) => (taskOf(body).includes('slow') ? text('slow done', { headersDelayMs: SLOW_MS }) : text('quick done')),
    workerEnv: {
      AGENT_RUN_CONCURRENCY: String(WORKER_SLOTS),
      AGENT_RUN_ACCOUNT_CONCURRENCY: String(ACCOUNT_CAP),
      AGENT_RUN_ACCOUNT_MAX_QUEUED: String(MAX_QUEUED),
      AGENT_RUN_ACCOUNT_RETRY_MAX_MS: '400',
    },
  });
}, 180_000);
afterAll(async () => stack?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function countOf(accountId: string, status: string): Promise<number> {
  const [row] = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE account_id = $1 AND status = $2', [accountId, status]);
  return row?.n ?? 0;
}

async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('per-account share of the run executor', { timeout: 120_000 }, () => {
  it("one account holds at most its cap of running runs; another account's run starts at once; every held run still runs", async () => {
    const hog = await stack.account();
    const other = await stack.account();
    const hogAgent = await stack.createAgent(hog, { tools: [] });
    const otherAgent = await stack.createAgent(other, { tools: [] });
    // More slow runs than the worker has slots (within the queued cap: 2 running + 3 queued).
    const hogRuns: Run[] = [];
    for (let i = 0; i < ACCOUNT_CAP; i++) hogRuns.push(await stack.call('createRun', { account_id: hog, agent_id: hogAgent.id, task: `slow ${i}` }));
    await until('the first runs to be claimed', async () => (await countOf(hog, 'running')) === ACCOUNT_CAP);
    for (let i = ACCOUNT_CAP; i < ACCOUNT_CAP + MAX_QUEUED; i++) hogRuns.push(await stack.call('createRun', { account_id: hog, agent_id: hogAgent.id, task: `slow ${i}` }));

    // Watch the hog's running count for the whole test: never above its cap.
    let peak = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        peak = Math.max(peak, await countOf(hog, 'running'));
        await sleep(50);
      }
    })();

    await sleep(500); // the held runs have been offered to the worker (and put back) meanwhile
    const quick = await stack.call('createRun', { account_id: other, agent_id: otherAgent.id, task: 'quick' });
    const done = await stack.waitForRun(other, quick.id, 30_000);
    expect(done).toMatchObject({ status: 'succeeded', output: 'quick done' });
    // It did not wait for a slot of the hog's: none of the hog's runs had ended when it finished.
    expect(await countOf(hog, 'succeeded')).toBe(0);

    // Nothing lost: every held run was picked up later and succeeded, never more than the cap at once.
    const ended = await Promise.all(hogRuns.map((r) => stack.waitForRun(hog, r.id, 90_000)));
    watching = false;
    await watcher;
    expect(ended.map((r) => r.status)).toEqual(hogRuns.map(() => 'succeeded'));
    expect(peak).toBe(ACCOUNT_CAP);
  });

  it('the cap holds over replicas: two workers with free slots still run at most the cap of one account at once', async () => {
    const second = await stack.startWorker();
    try {
      const acct = await stack.account();
      const agent = await stack.createAgent(acct, { tools: [] });
      const runs: Run[] = [];
      for (let i = 0; i < ACCOUNT_CAP + MAX_QUEUED; i++) runs.push(await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: `slow two replicas ${i}` }));
      let peak = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          peak = Math.max(peak, await countOf(acct, 'running'));
          await sleep(50);
        }
      })();
      const ended = await Promise.all(runs.map((r) => stack.waitForRun(acct, r.id, 90_000)));
      watching = false;
      await watcher;
      expect(ended.map((r) => r.status)).toEqual(runs.map(() => 'succeeded'));
      // 2 × WORKER_SLOTS slots were free for these runs; the database let ACCOUNT_CAP run at once.
      expect(peak).toBe(ACCOUNT_CAP);
    } finally {
      stack.workers.splice(stack.workers.indexOf(second), 1);
      await second.stop('SIGKILL');
    }
  });

  it('an account with AGENT_RUN_ACCOUNT_MAX_QUEUED runs queued is refused another: 429 too_many_queued_runs over HTTP, nothing queued', async () => {
    const acct = stack.gateway.key.account_id;
    const agent = await stack.createAgent(acct, { tools: [] });
    const create = (task: string) =>
      fetch(`${stack.gateway.url}/v1/agents/${agent.id}/runs`, {
        method: 'POST',
        headers: { ...stack.gateway.authHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ task }),
      });
    const accepted: string[] = [];
    for (let i = 0; i < ACCOUNT_CAP; i++) accepted.push(((await (await create(`slow running ${i}`)).json()) as Run).id);
    await until('the first runs to be claimed', async () => (await countOf(acct, 'running')) === ACCOUNT_CAP);
    for (let i = 0; i < MAX_QUEUED; i++) {
      const res = await create(`slow queued ${i}`);
      expect(res.status).toBe(202);
      accepted.push(((await res.json()) as Run).id);
    }
    const refused = await create('slow one too many');
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'too_many_queued_runs', type: 'rate_limit_error' });
    expect(body.error.message).toContain(String(MAX_QUEUED));
    const [row] = await stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs WHERE account_id = $1 AND agent_id = $2', [acct, agent.id]);
    expect(row?.n).toBe(ACCOUNT_CAP + MAX_QUEUED);
    // Over NATS the refusal is the typed code.
    const direct = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'slow direct' }).catch((err: unknown) => err);
    expect(isRpcError(direct) && direct.code).toBe('too_many_queued_runs');

    // A place freed (a queued run cancelled) is a place to queue again.
    await stack.call('cancelRun', { account_id: acct, run_id: accepted.at(-1)! });
    const again = await create('quick after a cancel');
    expect(again.status).toBe(202);
    accepted.push(((await again.json()) as Run).id);
    for (const id of accepted) await stack.call('cancelRun', { account_id: acct, run_id: id }).catch(() => undefined);
  });
});
