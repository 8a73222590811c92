import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metrics, sampleValue } from '@drael/metrics';
import { configSchema, type AgentRunConfig } from '../src/config/config.schema.js';
import { createPrisma, type PrismaService } from '../src/db/prisma.service.js';
import { RunRepository } from '../src/runs/run.repository.js';
import { RunRetentionService } from '../src/runs/run-retention.service.js';
import { account, freshRepositories } from './harness.js';

// Retention (AGENT_RUN_RETENTION_DAYS) on real Postgres: which runs go (ended, older than the
// period) with their steps, receipts and events, which stay (newer, queued, running), and which
// deleted agents go with them.
let repos: Awaited<ReturnType<typeof freshRepositories>>;

beforeAll(async () => {
  repos = await freshRepositories(4);
}, 60_000);
afterAll(async () => {
  await repos?.close();
});

const config = (env: Record<string, string>): AgentRunConfig =>
  configSchema.parse({ AGENT_RUN_DATA_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', AGENT_RUN_DATA_KEY_ACTIVE: 'k1', LOG_LEVEL: 'error', ...env });
const retention = (env: Record<string, string> = {}) => new RunRetentionService(config({ AGENT_RUN_RETENTION_DAYS: '30', ...env }), repos.runs);

const write = { name: 'a', model: 'm', instructions: 'x', tools: [], stepLimit: 5, budgetMicros: 1_000 };
let n = 0;
const newAgent = async (accountId: string) => {
  const row = await repos.agents.create(`agent_ret_${++n}`, accountId, write, 1_000);
  if (row === 'cap_reached') throw new Error('cap');
  return row.id;
};

/** A run of `agentId`, then set to `status`, ended `daysAgo` days ago (running: started then), with a step, a receipt and two events. */
async function runOf(accountId: string, agentId: string, status: 'succeeded' | 'failed' | 'cancelled' | 'queued' | 'running', daysAgo: number): Promise<string> {
  const id = `run_ret_${++n}`;
  const made = await repos.runs.create({ id, accountId, agentId, model: 'm', tools: [], stepLimit: 5, budgetMicros: 1_000, task: 'x', salt: new Uint8Array(32) }, 1_000);
  if (typeof made === 'string') throw new Error(made);
  const at = `now() - interval '${daysAgo} days'`;
  if (status === 'running') {
    await repos.db.query(`UPDATE runs SET status = 'running', claim_token = 't', lease_until = now() + interval '1 hour', started_at = ${at} WHERE id = $1`, [id]);
  } else if (status !== 'queued') {
    await repos.db.query(`UPDATE runs SET status = $2::"RunStatus", started_at = ${at}, finished_at = ${at} WHERE id = $1`, [id, status]);
  }
  await repos.db.query(`INSERT INTO steps (run_id, sequence, kind, status, cost_micros, detail) VALUES ($1, 0, 'inference.chat', 'ok', 1, '{}')`, [id]);
  await repos.db.query(`INSERT INTO receipts (run_id, sequence, hash, payload, key_id, signature) VALUES ($1, 0, 'h', '{}', 'k1', 's')`, [id]);
  await repos.db.query(`INSERT INTO run_events (run_id, seq, type, data) VALUES ($1, 100, 'run.step', '{}')`, [id]);
  return id;
}

const rowsOf = async (runId: string) => {
  const [r] = await repos.db.query<{ runs: number; steps: number; receipts: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM runs WHERE id = $1) AS runs, (SELECT count(*)::int FROM steps WHERE run_id = $1) AS steps,
            (SELECT count(*)::int FROM receipts WHERE run_id = $1) AS receipts, (SELECT count(*)::int FROM run_events WHERE run_id = $1) AS events`,
    [runId],
  );
  if (!r) throw new Error('no counts');
  return r;
};
const agentRow = async (id: string) => (await repos.db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM agents WHERE id = $1', [id]))[0];
const GONE = { runs: 0, steps: 0, receipts: 0, events: 0 };

describe('run retention', () => {
  it('removes ended runs older than the period with their steps, receipts and events; keeps newer ones, queued and running ones', async () => {
    const acct = account();
    const agent = await newAgent(acct);
    const old = [await runOf(acct, agent, 'succeeded', 40), await runOf(acct, agent, 'failed', 31), await runOf(acct, agent, 'cancelled', 365)];
    const kept = [await runOf(acct, agent, 'succeeded', 29), await runOf(acct, agent, 'queued', 0), await runOf(acct, agent, 'running', 60)];
    // A queued run made long ago: retention looks at when a run ended, never at when it was made.
    await repos.db.query(`UPDATE runs SET created_at = now() - interval '400 days' WHERE id = $1`, [kept[1]]);

    const removed = await retention().sweep();

    expect(removed.runs).toBeGreaterThanOrEqual(3);
    for (const id of old) expect(await rowsOf(id), id).toEqual(GONE);
    for (const id of kept) expect(await rowsOf(id), id).toMatchObject({ runs: 1, steps: 1, receipts: 1 });
    expect(await agentRow(agent)).toEqual({ deleted: false });
  });

  it('removes a deleted agent once retention removed the last run naming it; keeps one a newer run names, and live agents', async () => {
    const acct = account();
    const [onlyOld, stillNamed, live] = [await newAgent(acct), await newAgent(acct), await newAgent(acct)];
    await runOf(acct, onlyOld, 'succeeded', 40);
    await runOf(acct, stillNamed, 'succeeded', 40);
    const newer = await runOf(acct, stillNamed, 'succeeded', 1);
    await runOf(acct, live, 'succeeded', 40);
    for (const id of [onlyOld, stillNamed]) expect(await repos.agents.delete(acct, id)).toBe(true);
    expect(await agentRow(onlyOld)).toEqual({ deleted: true });

    const removed = await retention().sweep();

    expect(removed.agents).toBeGreaterThanOrEqual(1);
    expect(await agentRow(onlyOld)).toBeUndefined();
    expect(await agentRow(stillNamed)).toEqual({ deleted: true });
    expect((await rowsOf(newer)).runs).toBe(1);
    expect(await agentRow(live)).toEqual({ deleted: false });
  });

  it('one sweep goes on batch after batch until nothing older is left; two replicas sweeping at once remove each run once', async () => {
    const acct = account();
    const agent = await newAgent(acct);
    const old: string[] = [];
    for (let i = 0; i < 7; i++) old.push(await runOf(acct, agent, 'succeeded', 50 + i));
    expect((await retention({ AGENT_RUN_RETENTION_BATCH: '2' }).sweep()).runs).toBeGreaterThanOrEqual(7);
    for (const id of old) expect((await rowsOf(id)).runs).toBe(0);

    const again: string[] = [];
    for (let i = 0; i < 9; i++) again.push(await runOf(acct, agent, 'failed', 50 + i));
    const [a, b] = await Promise.all([retention({ AGENT_RUN_RETENTION_BATCH: '2' }).sweep(), retention({ AGENT_RUN_RETENTION_BATCH: '2' }).sweep()]);
    // Other tests' runs are newer than 30 days or already gone: these nine are all there is to remove.
    expect(a.runs + b.runs).toBe(9);
    for (const id of again) expect((await rowsOf(id)).runs).toBe(0);
  });

  it('counts each sweep by outcome; one whose database does not answer removes nothing, is counted failed and does not throw', async () => {
    const sweeps = async (outcome: string) => sampleValue((await metrics.render()).body, 'drael_agent_run_retention_sweeps_total', { outcome });
    const [ok, failed] = [await sweeps('ok'), await sweeps('failed')];
    await retention().sweep();
    expect(await sweeps('ok')).toBe(ok + 1);
    const unreachable = createPrisma('postgresql://postgres@127.0.0.1:1/nowhere?schema=none', 1);
    try {
      const broken = new RunRetentionService(config({ AGENT_RUN_RETENTION_DAYS: '30' }), new RunRepository({ client: unreachable } as PrismaService));
      expect(await broken.sweep()).toEqual({ runs: 0, agents: 0 });
    } finally {
      await unreachable.$disconnect();
    }
    expect(await sweeps('failed')).toBe(failed + 1);
    expect(await sweeps('ok')).toBe(ok + 1);
  });

  it('AGENT_RUN_RETENTION_DAYS=0 keeps every run', async () => {
    const acct = account();
    const agent = await newAgent(acct);
    const ancient = await runOf(acct, agent, 'succeeded', 3650);
    expect(await retention({ AGENT_RUN_RETENTION_DAYS: '0' }).sweep()).toEqual({ runs: 0, agents: 0 });
    expect((await rowsOf(ancient)).runs).toBe(1);
    await retention().sweep();
    expect(await rowsOf(ancient)).toEqual(GONE);
  });
});
