import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRpcError } from '@drael/nats-rpc';
import { ACCOUNT_AGENTS_LOCK } from '../src/agents/agent.repository.js';
import { BASE_DB, startStack, type Stack } from './harness.js';

// A burst of writes that queue on one lock or on the pool (one account's concurrent creates under
// load: CI saw three of thirty come back `internal`). Prisma bounds an interactive transaction by
// its own defaults (2 s to start, 5 s to finish), far under the database bounds the service is
// configured with; a transaction that waited past them failed as a defect. Here the worker's pool
// holds one connection and the test holds the account's agents lock, so the waits are certain.
const POOL = 1;
const HOLD_MS = 6_000;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workerEnv: { DATABASE_POOL_SIZE: String(POOL) } });
}, 180_000);
afterAll(async () => stack?.stop());

const codeOf = (err: unknown) => (isRpcError(err) ? err.code : String(err));

/** Holds the account's agents lock (the one every create of the account takes before it counts) on a connection of the test's own until `release` is called. */
async function holdAgentsLock(accountId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: BASE_DB });
  await client.connect();
  await client.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [ACCOUNT_AGENTS_LOCK, accountId]);
  return {
    release: async () => {
      await client.query('SELECT pg_advisory_unlock($1::int, hashtext($2))', [ACCOUNT_AGENTS_LOCK, accountId]);
      await client.end();
    },
  };
}

describe('writes that wait their turn within the database bounds succeed', { timeout: 120_000 }, () => {
  it('creates queued on the account lock and on the one pooled connection for longer than Prisma`s defaults all land', async () => {
    const acct = await stack.account();
    const lock = await holdAgentsLock(acct);
    const made = Array.from({ length: 3 }, () =>
      stack.call('createAgent', { account_id: acct, agent: { model: 'test-model', instructions: 'i', tools: [], limits: { step_limit: 1, budget_usd: 1 } } }),
    );
    for (const m of made) m.catch(() => undefined);
    await new Promise((r) => setTimeout(r, HOLD_MS));
    await lock.release();
    const settled = await Promise.allSettled(made);
    expect(settled.map((s) => (s.status === 'fulfilled' ? 'created' : codeOf(s.reason)))).toEqual(['created', 'created', 'created']);
    expect(await stack.db.query('SELECT id FROM agents WHERE account_id = $1', [acct])).toHaveLength(3);
  });
});
