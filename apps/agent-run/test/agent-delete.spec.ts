import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRepository, isForeignKeyViolation } from '../src/agents/agent.repository.js';
import { createPrisma, type PrismaService } from '../src/db/prisma.service.js';
import { RunRepository } from '../src/runs/run.repository.js';
import { account, freshSchema } from './harness.js';

// Deleting an agent (attack report 4, F1): removed when no run names it, kept for its runs
// otherwise; the races with a run being made are decided by the runs' foreign key.
let db: Awaited<ReturnType<typeof freshSchema>>;
let prisma: ReturnType<typeof createPrisma>;
let agents: AgentRepository;
let runs: RunRepository;

beforeAll(async () => {
  db = await freshSchema();
  prisma = createPrisma(db.url, 2);
  agents = new AgentRepository({ client: prisma } as PrismaService);
  runs = new RunRepository({ client: prisma } as PrismaService);
}, 60_000);
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const write = { name: 'a', model: 'm', instructions: 'x', tools: [], stepLimit: 5, budgetMicros: 1_000 };
let n = 0;
const newAgent = async (accountId: string) => {
  const row = await agents.create(`agent_del_${++n}`, accountId, write, 10);
  if (row === 'cap_reached') throw new Error('cap');
  return row.id;
};
const runOf = (accountId: string, agentId: string) =>
  runs.create({ id: `run_del_${++n}`, accountId, agentId, model: 'm', tools: [], stepLimit: 5, budgetMicros: 1_000, task: 'x', salt: new Uint8Array(32) }, 100);
const rowOf = async (id: string) => (await db.query<{ deleted: boolean }>('SELECT deleted_at IS NOT NULL AS deleted FROM agents WHERE id = $1', [id]))[0];

describe('agent delete', () => {
  it('removes an agent no run names, and keeps (marked deleted) one that runs name', async () => {
    const acct = account();
    const [bare, used] = [await newAgent(acct), await newAgent(acct)];
    expect(await runOf(acct, used)).toMatchObject({ created: true });
    expect(await agents.delete(acct, bare)).toBe(true);
    expect(await agents.delete(acct, used)).toBe(true);
    expect(await rowOf(bare)).toBeUndefined();
    expect(await rowOf(used)).toEqual({ deleted: true });
    expect(await agents.delete(acct, used)).toBe(false);
  });

  it("the foreign key's refusals are recognised: a run for a removed agent is agent_gone; removing a named agent is refused", async () => {
    const acct = account();
    expect(await runOf(acct, 'agent_never_was')).toBe('agent_gone');
    const used = await newAgent(acct);
    await runOf(acct, used);
    const err = await prisma.$executeRaw`DELETE FROM "agents" WHERE "id" = ${used}`.catch((e: unknown) => e);
    expect(isForeignKeyViolation(err)).toBe(true);
  });
});
