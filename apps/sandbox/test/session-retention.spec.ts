import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { b64, placementKeyOf, placementKv, startSandbox, stateSessions, unb64, type Sandbox } from './sandbox-harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The volume images a tenant holds on disk (sessions/ or requests/<sha256(tenant)>/). */
async function imagesOf(sbx: Sandbox, tenant: string, kind: 'sessions' | 'requests' = 'sessions'): Promise<string[]> {
  const root = kind === 'sessions' ? stateSessions(sbx.stateDir) : join(sbx.stateDir, 'requests');
  const dir = join(root, createHash('sha256').update(`tenant\0${tenant}`).digest('hex').slice(0, 40));
  return (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.img'));
}

describe('idle sessions expire (SANDBOX_SESSION_MAX_IDLE_S)', () => {
  const MAX_IDLE_S = 3;
  let sbx: Sandbox;
  beforeAll(async () => {
    sbx = await startSandbox({ SANDBOX_SESSION_MAX_IDLE_S: String(MAX_IDLE_S) });
  });
  afterAll(async () => {
    await sbx?.stop();
  });

  it('a session unused for longer than the maximum is removed and its files are gone', async () => {
    const ws = { tenant: 'idle-1', session: 'stale' };
    await sbx.call(sandboxCatalog.filesWrite, { ...ws, path: 'notes.txt', content_base64: b64('remember me') });
    expect(await imagesOf(sbx, ws.tenant)).toHaveLength(1);
    await expect.poll(() => imagesOf(sbx, ws.tenant), { timeout: 30_000, interval: 250 }).toEqual([]);
    const err = await sbx.errorOf(sandboxCatalog.filesRead, { ...ws, path: 'notes.txt' });
    expect(err.code).toBe('file_not_found');
    expect((await sbx.call(sandboxCatalog.filesList, ws)).files).toEqual([]);
    // The next use starts from an empty workspace.
    expect(await sbx.run({ ...ws, runtime: 'bash', code: 'ls -A' })).toMatchObject({ ok: true, stdout: '' });
  });

  it('a session only read from keeps living past the maximum, and expires once the reads stop', async () => {
    const ws = { tenant: 'idle-2', session: 'read-only' };
    await sbx.call(sandboxCatalog.filesWrite, { ...ws, path: 'data.txt', content_base64: b64('still here') });
    // Reads (no write) for three times the maximum idle time.
    const until = Date.now() + 3 * MAX_IDLE_S * 1000;
    while (Date.now() < until) {
      const read = await sbx.call(sandboxCatalog.filesRead, { ...ws, path: 'data.txt' });
      expect(unb64(read.content_base64)).toBe('still here');
      await sleep(700);
    }
    expect(await sbx.run({ ...ws, runtime: 'bash', code: 'cat data.txt' })).toMatchObject({ ok: true, stdout: 'still here' });
    expect(await imagesOf(sbx, ws.tenant)).toHaveLength(1);
    await expect.poll(() => imagesOf(sbx, ws.tenant), { timeout: 30_000, interval: 250 }).toEqual([]);
  });

  it('a session in use by a run is not removed, however long the run', async () => {
    const ws = { tenant: 'idle-3', session: 'busy' };
    await sbx.call(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', content_base64: b64('seed') });
    const run = sbx.run({ ...ws, runtime: 'bash', code: `sleep ${3 * MAX_IDLE_S}; cat seed.txt; echo done > out.txt` });
    // Well past the maximum idle time and several sweeps (every second here) into the run.
    await sleep(2 * MAX_IDLE_S * 1000);
    expect(await imagesOf(sbx, ws.tenant)).toHaveLength(1);
    expect(await run).toMatchObject({ ok: true, stdout: 'seed' });
    // Idle time counts from the end of the run.
    const out = await sbx.call(sandboxCatalog.filesRead, { ...ws, path: 'out.txt' });
    expect(unb64(out.content_base64)).toBe('done\n');
  });

  it('the sweep prunes the delete markers earlier versions left in the placement (one per key for good); a session made again on such a key keeps its record', async () => {
    const { kv, nc, messagesOf } = await placementKv(sbx.prefix);
    try {
      // As versions before 7a94c76 removed a record: the KV's delete, which leaves a marker (one
      // message on the key's subject, kept for good). Not counted here: the sweep (every second
      // in this suite) may prune it before any look; without the prune it stays and the poll fails.
      const markers = [placementKeyOf('legacy', 'req_old', 'request'), placementKeyOf('legacy', 'old'), placementKeyOf('legacy', 'again')];
      for (const key of markers) {
        await kv.put(key, '{}');
        await kv.delete(key);
      }
      for (const key of markers) await expect.poll(() => messagesOf(key), { timeout: 15_000, interval: 250 }).toBe(0);
      // A marker, then a session made on its key: its record and file outlive several sweeps (read
      // every 700 ms, which keeps the session from its own idle expiry of 3 s).
      const ws = { tenant: 'legacy', session: 'again' };
      await kv.put(markers[2]!, '{}');
      await kv.delete(markers[2]!);
      await sbx.call(sandboxCatalog.filesWrite, { ...ws, path: 'kept.txt', content_base64: b64('kept') });
      for (let sweeps = 0; sweeps < 4; sweeps++) {
        await sleep(700);
        expect(unb64((await sbx.call(sandboxCatalog.filesRead, { ...ws, path: 'kept.txt' })).content_base64)).toBe('kept');
        expect((await kv.get(markers[2]!))?.operation).toBe('PUT');
      }
    } finally {
      await nc.close();
    }
  });

  it('a session mounted by another replica on the host is not removed until that replica lets it go', { timeout: 120_000 }, async () => {
    // A second service on the same state dir that never sweeps sessions itself; it keeps a volume
    // mounted for a while (20 s) after its last use.
    const other = await startSandbox({ SANDBOX_STATE_DIR: sbx.stateDir, SANDBOX_SESSION_MAX_IDLE_S: '0' });
    try {
      const ws = { tenant: 'idle-4', session: 'elsewhere' };
      await other.call(sandboxCatalog.filesWrite, { ...ws, path: 'f.txt', content_base64: b64('theirs') });
      await sleep(2 * MAX_IDLE_S * 1000);
      expect(await imagesOf(sbx, ws.tenant)).toHaveLength(1);
      expect(unb64((await other.call(sandboxCatalog.filesRead, { ...ws, path: 'f.txt' })).content_base64)).toBe('theirs');
      // Once the other replica has unmounted it, it is just idle.
      await expect.poll(() => imagesOf(sbx, ws.tenant), { timeout: 60_000, interval: 500 }).toEqual([]);
    } finally {
      // Its stop removes the shared state dir's files too; this suite's own tests are done by now.
      await other.stop();
    }
  });
});

describe('sessions per tenant (SANDBOX_MAX_SESSIONS_PER_TENANT)', () => {
  const MAX = 3;
  let sbx: Sandbox;
  beforeAll(async () => {
    sbx = await startSandbox({ SANDBOX_MAX_SESSIONS_PER_TENANT: String(MAX) });
  });
  afterAll(async () => {
    await sbx?.stop();
  });

  it('a new session beyond the cap is refused with session_limit_reached; existing ones keep working; other tenants are unaffected', async () => {
    const tenant = 'capped';
    expect(await sbx.run({ tenant, session: 's1', runtime: 'bash', code: 'echo one > f.txt' })).toMatchObject({ ok: true });
    await sbx.call(sandboxCatalog.filesWrite, { tenant, session: 's2', path: 'f.txt', content_base64: b64('two') });
    expect(await sbx.run({ tenant, session: 's3', runtime: 'python', code: 'open("f.txt", "w").write("three")' })).toMatchObject({ ok: true });

    const refused = await sbx.errorOf(sandboxCatalog.run, { tenant, session: 's4', runtime: 'bash', code: 'echo hi' });
    expect(refused).toBeInstanceOf(RpcError);
    expect(refused.code).toBe('session_limit_reached');
    expect(refused.retryable).toBe(false);
    expect(refused.message).toContain(`${MAX} sandbox sessions`);
    expect(refused.message).toMatch(/delet/);
    expect(refused.details).toMatchObject({ param: 'session', sessions: MAX, max_sessions: MAX });
    const writeRefused = await sbx.errorOf(sandboxCatalog.filesWrite, { tenant, session: 's4', path: 'f.txt', content_base64: b64('x') });
    expect(writeRefused.code).toBe('session_limit_reached');
    // Looking at a session that does not exist creates nothing and is not refused.
    expect((await sbx.call(sandboxCatalog.filesList, { tenant, session: 's4' })).files).toEqual([]);
    expect(await imagesOf(sbx, tenant)).toHaveLength(MAX);

    // The sessions the tenant has keep working, writes included.
    expect(await sbx.run({ tenant, session: 's1', runtime: 'bash', code: 'cat f.txt; echo more >> f.txt' })).toMatchObject({ ok: true, stdout: 'one\n' });
    await sbx.call(sandboxCatalog.filesWrite, { tenant, session: 's2', path: 'g.txt', content_base64: b64('more') });

    // Another tenant has a cap of its own.
    expect(await sbx.run({ tenant: 'uncapped', session: 's4', runtime: 'bash', code: 'echo fine' })).toMatchObject({ ok: true, stdout: 'fine\n' });

    // Deleting a session frees its place.
    expect(await sbx.call(sandboxCatalog.workspaceDelete, { tenant, session: 's2' })).toEqual({ deleted: true });
    expect(await sbx.run({ tenant, session: 's4', runtime: 'bash', code: 'echo now' })).toMatchObject({ ok: true, stdout: 'now\n' });
    expect(await imagesOf(sbx, tenant)).toHaveLength(MAX);
  });

  it('request workspaces do not count towards the cap and are never refused by it', async () => {
    const tenant = 'requests-heavy';
    for (let i = 0; i < MAX + 1; i++) {
      expect(await sbx.run({ tenant, session: `req_${i}`, scope: 'request', runtime: 'bash', code: 'echo r > f.txt' })).toMatchObject({ ok: true });
    }
    for (let i = 0; i < MAX; i++) {
      await sbx.call(sandboxCatalog.filesWrite, { tenant, session: `s${i}`, path: 'f.txt', content_base64: b64('s') });
    }
    expect(await imagesOf(sbx, tenant, 'requests')).toHaveLength(MAX + 1);
    expect(await imagesOf(sbx, tenant)).toHaveLength(MAX);
    expect((await sbx.errorOf(sandboxCatalog.filesWrite, { tenant, session: 'one-more', path: 'f.txt', content_base64: b64('s') })).code).toBe('session_limit_reached');
    // At the cap, a request still gets its workspace.
    expect(await sbx.run({ tenant, session: 'req_late', scope: 'request', runtime: 'bash', code: 'echo r > f.txt; cat f.txt' })).toMatchObject({ ok: true, stdout: 'r\n' });
  });

  it('concurrent creates at the cap do not overshoot it', async () => {
    const tenant = 'racer';
    const attempts = 8;
    const results = await Promise.allSettled(
      Array.from({ length: attempts }, (_, i) => sbx.call(sandboxCatalog.filesWrite, { tenant, session: `race-${i}`, path: 'f.txt', content_base64: b64(String(i)) })),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as RpcError] : []));
    expect(created).toHaveLength(MAX);
    expect(refused.map((e) => e.code)).toEqual(Array(attempts - MAX).fill('session_limit_reached'));
    expect(await imagesOf(sbx, tenant)).toHaveLength(MAX);
  });
});
