import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForeignKeyViolation } from '../src/agents/agent.repository.js';
import { account, freshRepositories } from './harness.js';

// Deleting an agent (attack report 4, F1): removed when no run names it, kept for its runs
// otherwise; the races with a run being made are decided by the runs' foreign key.
let repos: Awaited<ReturnType<typeof freshRepositories>>;

beforeAll(async () => {
  repos = await freshRepositories();
}, 60_000);
afterAll(async () => {
  await repos?.close();
});

const write = { name: 'a', model: 'm', instructions: 'x', tools: [], stepLimit: 5, budgetMicros: 1_000 };
let n = 0;
const newAgent = async (accountId: string) => {
  const row = await repos.agents.create(`agent_del_${++n}`, accountId, write, 10);
  if (row === 'cap_reached') throw new Error('cap');
  return row.id;
};
const runOf = (accountId: string, agentId: string) =>
  repos.runs.create({ id: `run_del_${++n}`, accountId, agentId, model: 'm', tools: [], stepLimit: 5, budgetMicros: 1_000, task: 'x', salt: new Uint8Array(32) }, 100);
const rowOf = async (id: string) => (await repos.db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM agents WHERE id = $1', [id]))[0];

describe('agent delete', () => {
  it('removes an agent no run names, and keeps (marked deleted) one that runs name', async () => {
    const acct = account();
    const [bare, used] = [await newAgent(acct), await newAgent(acct)];
    expect(await runOf(acct, used)).toMatchObject({ created: true });
    expect(await repos.agents.delete(acct, bare)).toBe(true);
    expect(await repos.agents.delete(acct, used)).toBe(true);
    expect(await rowOf(bare)).toBeUndefined();
    expect(await rowOf(used)).toEqual({ deleted: true });
    expect(await repos.agents.delete(acct, used)).toBe(false);
  });

  it("the foreign key's refusals are recognised: a run for a removed agent is agent_gone; removing a named agent is refused", async () => {
    const acct = account();
    expect(await runOf(acct, 'agent_never_was')).toBe('agent_gone');
    const used = await newAgent(acct);
    await runOf(acct, used);
    const err = await repos.prisma.$executeRaw`DELETE FROM "agents" WHERE "id" = ${used}`.catch((e: unknown) => e);
    expect(isForeignKeyViolation(err)).toBe(true);
  });
});
