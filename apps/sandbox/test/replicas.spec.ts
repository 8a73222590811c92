import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient, RpcError, wireSubject } from '@drael/nats-rpc';
import { b64, placementKeyOf, placementKv, rewritePlacementRecord, startSandbox, unb64, workMountsOf, type Sandbox } from './sandbox-harness.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
// A short heartbeat TTL, so the survivor takes a killed replica's sessions over soon.
const env = { SANDBOX_REPLICA_TTL_S: '3', SANDBOX_SESSION_QUOTA_MB: '16', SANDBOX_MAX_SESSIONS_PER_TENANT: '3' };

let a: Sandbox;
let b: Sandbox;
let client: NatsRpcClient;
let nc: NatsConnection;
beforeAll(async () => {
  a = await startSandbox(env);
  b = await startSandbox(env, { join: a });
  // A caller of its own: the queue group gives each request to either replica.
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix: a.prefix });
  nc = await connect({ servers: NATS_URL });
});
afterAll(async () => {
  await client?.close();
  await nc?.close();
  await b?.stop();
  await a?.stop();
});

/** The replica id of the session's holder, from the placement KV every replica reads. */
async function holderOf(tenant: string, session: string): Promise<string> {
  const { kv, nc: knc } = await placementKv(a.prefix);
  try {
    const e = await kv.get(placementKeyOf(tenant, session));
    return (JSON.parse(e!.string()) as { holder: string }).holder;
  } finally {
    await knc.close();
  }
}

/** Which started replica a replica id is (`<SANDBOX_INSTANCE>-<8 hex>`). */
function replicaNamed(id: string): Sandbox {
  const found = [a, b].find((s) => new RegExp(`^${s.instance}-[0-9a-f]{8}$`).test(id));
  if (!found) throw new Error(`no started replica is ${id}`);
  return found;
}

/** The session's volume images on one replica's own disk. */
async function imagesOn(s: Sandbox, tenant: string): Promise<string[]> {
  const dir = join(s.stateDir, 'sessions', createHash('sha256').update(`tenant\0${tenant}`).digest('hex').slice(0, 40));
  return (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.img'));
}

/** Requests each replica of this prefix has handled on one subject ($SRV.STATS, per replica). */
async function requestsPerReplica(subject: string): Promise<number[]> {
  const counts: number[] = [];
  const replies = await nc.requestMany('$SRV.STATS.sandbox', '', { maxWait: 2_000 });
  for await (const m of replies) {
    const stats = m.json<{ metadata?: Record<string, string>; endpoints: { subject: string; num_requests: number }[] }>();
    if (stats.metadata?.prefix !== a.prefix) continue; // other tests' sandboxes answer too
    counts.push(stats.endpoints.find((e) => e.subject === wireSubject(subject, a.prefix))?.num_requests ?? 0);
  }
  return counts;
}

/** A replica's running containers with a session's volume at /work (prepared for the session's next run). */
async function containersOnSessions(s: Sandbox): Promise<string[]> {
  const sessions = join(s.stateDir, 'sessions');
  return [...(await workMountsOf(s.instance, 'running'))].filter(([, source]) => source.startsWith(sessions)).map(([id]) => id);
}

describe('sandbox sessions across two replicas', () => {
  it("a session's files are read and run through the bus whichever replica takes the request (the other forwards to the holder)", async () => {
    const ws = { tenant: 'multi', session: 'one' };
    await client.request(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', content_base64: b64('41\n') });
    const holder = replicaNamed(await holderOf(ws.tenant, ws.session));
    const other = holder === a ? b : a;
    for (let i = 0; i < 12; i++) {
      const read = await client.request(sandboxCatalog.filesRead, { ...ws, path: 'seed.txt' });
      expect(unb64(read.content_base64)).toBe('41\n');
      const run = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: `n=$(cat seed.txt); echo $((n + ${i})) >> log.txt; echo $((n + ${i}))` });
      expect(run).toMatchObject({ ok: true, stdout: `${41 + i}\n` });
    }
    // The plain JSON path (a caller in any language) routes the same way.
    for (let i = 0; i < 6; i++) {
      const reply = await nc.request(wireSubject(sandboxCatalog.filesRead.subject, a.prefix), JSON.stringify({ ...ws, path: 'log.txt' }), { timeout: 10_000 });
      const { result } = reply.json<{ result: { content_base64: string } }>();
      expect(unb64(result.content_base64).split('\n').filter(Boolean)).toHaveLength(12);
    }
    // Both replicas took requests, yet only the holder has the session on its disk: the other forwarded.
    const perReplica = await requestsPerReplica(sandboxCatalog.filesRead.subject);
    expect(perReplica).toHaveLength(2);
    for (const n of perReplica) expect(n).toBeGreaterThan(0);
    expect(await imagesOn(holder, ws.tenant)).toHaveLength(1);
    expect(await imagesOn(other, ws.tenant)).toEqual([]);
  });

  it("the per-tenant cap and the session list count every replica's sessions", async () => {
    for (let i = 0; i < 3; i++) await client.request(sandboxCatalog.filesWrite, { tenant: 'capped', session: `c${i}`, path: 'f', content_base64: b64('x') });
    const err = await client.request(sandboxCatalog.filesWrite, { tenant: 'capped', session: 'c3', path: 'f', content_base64: b64('x') }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe('session_limit_reached');
    // Whichever replica answers the list sees all three.
    for (let i = 0; i < 4; i++) {
      const list = await client.request(sandboxCatalog.sessionsList, { tenant: 'capped', order: 'asc' });
      expect(list.sessions.map((s) => s.id)).toEqual(['c0', 'c1', 'c2']);
      expect(list.total).toBe(3);
    }
  });

  it('a holder that restores its own session (its record changed under it) runs the next run on the restored files, not in a container prepared on the replaced volume', async () => {
    // The chaos run lost a completed run's files this way: after a NATS restart the holder's record
    // write timed out (maybe applied, maybe not), so its next call took the session over from itself
    // and restored the saved copy onto a new volume; the run then went to the container prepared
    // on the old volume after the run before, and what it wrote went with that volume.
    const ws = { tenant: 'restored', session: 'self' };
    const first = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: 'echo 1 >> log.txt' });
    expect(first.ok).toBe(true);
    const holder = replicaNamed(await holderOf(ws.tenant, ws.session));
    // The holder prepares a container on the session's volume for its next run.
    await expect.poll(async () => (await containersOnSessions(holder)).length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    // The record rewritten as it is, at its revision: the holder's own last write is not the latest.
    await rewritePlacementRecord(a.prefix, ws.tenant, ws.session, (record) => record);
    const second = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: 'echo 2 >> log.txt' });
    expect(second.ok).toBe(true);
    const third = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: 'cat log.txt' });
    expect(third.stdout).toBe('1\n2\n');
    const read = await client.request(sandboxCatalog.filesRead, { ...ws, path: 'log.txt' });
    expect(unb64(read.content_base64)).toBe('1\n2\n');
  });

  it('killed (SIGKILL), the holder loses nothing but what was in flight: the survivor restores the files of completed runs and serves them', async () => {
    const ws = { tenant: 'survive', session: 'kept' };
    await client.request(sandboxCatalog.filesWrite, { ...ws, path: 'in/seed.txt', content_base64: b64('7\n') });
    const made = await client.request(sandboxCatalog.run, {
      ...ws,
      runtime: 'python',
      code: 'n = int(open("in/seed.txt").read())\nimport os\nos.makedirs("out", exist_ok=True)\nopen("out/result.txt", "w").write(str(n * 6))\nprint("done")',
    });
    expect(made).toMatchObject({ ok: true, stdout: 'done\n' });
    const holderId = await holderOf(ws.tenant, ws.session);
    const holder = replicaNamed(holderId);
    const survivor = holder === a ? b : a;
    expect(await imagesOn(survivor, ws.tenant)).toEqual([]);

    await holder.proc.stop('SIGKILL');

    // Until the holder's heartbeat lapses, a call is refused with a typed, retryable error; then the
    // survivor takes the session over and restores it. Every answer is one or the other.
    const seen = new Set<string>();
    let read: { content_base64: string } | undefined;
    for (let i = 0; i < 120 && !read; i++) {
      try {
        read = await client.request(sandboxCatalog.filesRead, { ...ws, path: 'out/result.txt' });
      } catch (err) {
        expect(err).toBeInstanceOf(RpcError);
        expect((err as RpcError).retryable).toBe(true);
        seen.add((err as RpcError).code);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(read, `never served after the kill; errors seen: ${[...seen].join(', ')}`).toBeDefined();
    expect(unb64(read!.content_base64)).toBe('42');
    expect(await holderOf(ws.tenant, ws.session)).not.toBe(holderId);
    expect(await imagesOn(survivor, ws.tenant)).toHaveLength(1);

    const files = await client.request(sandboxCatalog.filesList, ws);
    expect(files.files.map((f) => f.path).sort()).toEqual(['in/seed.txt', 'out/result.txt']);
    const again = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: 'cat out/result.txt; ls -ln in | tail -n 1' });
    expect(again.ok).toBe(true);
    expect(again.stdout).toMatch(/^42/);
    // Ownership survives the save and restore (the sandbox user, 65534).
    expect(again.stdout).toContain('65534');
    // The other sessions of the dead replica are listed and served too.
    const list = await client.request(sandboxCatalog.sessionsList, { tenant: 'multi' });
    expect(list.sessions.map((s) => s.id)).toEqual(['one']);
    const log = await client.request(sandboxCatalog.filesRead, { tenant: 'multi', session: 'one', path: 'log.txt' });
    expect(unb64(log.content_base64).split('\n').filter(Boolean)).toHaveLength(12);
    // Back (same disk, new process), the old holder keeps a stale copy of the session. Deleted
    // through the bus, the session stays deleted whichever replica answers: the stale copy is
    // never adopted as a session of its own.
    // Its start returns once the restarted process itself listens (startServiceProcess), not when
    // the survivor answers the health subject for it.
    await holder.restart();
    expect(await requestsPerReplica(sandboxCatalog.filesList.subject)).toHaveLength(2);
    expect(await imagesOn(holder, ws.tenant)).toHaveLength(1);
    expect(await client.request(sandboxCatalog.workspaceDelete, ws)).toEqual({ deleted: true });
    // Asked until the restarted replica has answered some of the lists itself (its counters started
    // at zero; the queue group picks a replica per message, so ten calls can all go to the other).
    const restartedAnswered = async () => Math.min(...(await requestsPerReplica(sandboxCatalog.filesList.subject))) > 0;
    for (let i = 0; i < 100; i++) {
      expect((await client.request(sandboxCatalog.filesList, ws)).files).toEqual([]);
      expect((await client.request(sandboxCatalog.sessionsList, { tenant: ws.tenant })).sessions).toEqual([]);
      if (i >= 9 && (await restartedAnswered())) break;
    }
    expect(await restartedAnswered()).toBe(true);
    // Its stale copy was dropped when it answered for the session, not served.
    expect(await imagesOn(holder, ws.tenant)).toEqual([]);
    // A new session of the same id starts empty, wherever it is created.
    await client.request(sandboxCatalog.filesWrite, { ...ws, path: 'fresh.txt', content_base64: b64('new') });
    expect((await client.request(sandboxCatalog.filesList, ws)).files.map((f) => f.path)).toEqual(['fresh.txt']);
  });
});
