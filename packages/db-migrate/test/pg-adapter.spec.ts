import { randomInt } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrationAdapterFactory, parseDatabaseUrl } from '../src/pg-adapter.js';

const target = parseDatabaseUrl(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael');

async function tryLock(key: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    return rows[0]!.locked;
  } finally {
    await client.end();
  }
}

describe('migrationAdapterFactory', () => {
  it("close() ends the engine's connections, so a session lock it took is free at once (not after the pool's idle timeout)", async () => {
    // A key of this test's own: the engine's own (72707369) is shared by every deploy on the server.
    const key = randomInt(1, 2 ** 31 - 1);
    const factory = migrationAdapterFactory(target);
    const adapter = await factory.connect();
    // As the schema engine does: a session-level advisory lock, never unlocked.
    await adapter.queryRaw({ sql: `SELECT pg_advisory_lock(${key})::text`, args: [], argTypes: [] });
    expect(await tryLock(key)).toBe(false);
    await factory.close();
    // The server ends the closed connection's backend, and with it its session locks, a moment
    // after the socket closes (a loaded machine: tens of ms): asked for up to 2 s, far under the
    // 10 s the connection would idle in the pool without close().
    const deadline = Date.now() + 2_000;
    let free = await tryLock(key);
    while (!free && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      free = await tryLock(key);
    }
    expect(free).toBe(true);
  });
});
