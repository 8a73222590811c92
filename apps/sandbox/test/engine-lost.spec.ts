import { rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { b64, placementKeyOf, placementKv, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';
import { bucketNameOf } from '../src/placement/sandbox-stores.js';

// Two sandbox replicas; the second reaches the machine's container engine through a socket this
// test can cut, as a pod's engine sidecar that crashes (multi-replica pass, F2). A replica whose
// engine is gone leaves the queue group, so every run goes to the one that can run it, and it
// rejoins once its engine answers again. It used to stay, and NATS gave it half the runs.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ENGINE = '/var/run/docker.sock';
const socketPath = join(tmpdir(), `drael-engine-proxy-${process.pid}.sock`);
let engine: { server: Server; sockets: Set<Socket> } | undefined;
let a: Sandbox;
let b: Sandbox;
let client: NatsRpcClient;
let nc: NatsConnection;

/** A unix socket that pipes every connection to the real engine, until it is cut. */
async function openEngine(): Promise<void> {
  rmSync(socketPath, { force: true });
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = createConnection(ENGINE);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(socketPath, r));
  engine = { server, sockets };
}

async function cutEngine(): Promise<void> {
  const e = engine!;
  engine = undefined;
  for (const s of e.sockets) s.destroy();
  await new Promise((r) => e.server.close(r));
}

/** The replicas of this test's sandbox in the queue group, by their $SRV answers. */
async function members(): Promise<number> {
  const inbox = `_INBOX.engine-lost-${a.prefix}-${Math.random().toString(36).slice(2)}`;
  let count = 0;
  const sub = nc.subscribe(inbox, {
    callback: (_e, m) => {
      if ((m.json<{ metadata?: { prefix?: string } }>().metadata?.prefix ?? '') === a.prefix) count++;
    },
  });
  nc.publish('$SRV.PING.sandbox', '', { reply: inbox });
  await new Promise((r) => setTimeout(r, 500));
  sub.unsubscribe();
  return count;
}

async function waitForMembers(n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await members()) !== n) {
    if (Date.now() > deadline) throw new Error(`the queue group did not come to ${n} replicas`);
  }
}

beforeAll(async () => {
  await openEngine();
  a = await startSandbox({ SANDBOX_WARM_POOL: '0' });
  b = await startSandbox({ SANDBOX_WARM_POOL: '0', DOCKER_SOCKET: socketPath, SANDBOX_QUEUE_HEALTH_INTERVAL_MS: '300', SANDBOX_QUEUE_HEALTH_FAILURES: '2' }, { join: a });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix: a.prefix });
  nc = await connect({ servers: NATS_URL });
}, 180_000);

afterAll(async () => {
  await client?.close();
  await nc?.close();
  if (!engine) await openEngine().catch(() => undefined);
  await b?.stop();
  await a?.stop();
  if (engine) await cutEngine();
  rmSync(socketPath, { force: true });
});

describe('a sandbox replica whose container engine is gone', () => {
  it('leaves the queue group: every run goes to the replica that can run it; it rejoins when its engine is back', async () => {
    await waitForMembers(2);
    await cutEngine();
    await waitForMembers(1);
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.request(sandboxCatalog.run, { tenant: 'engine-lost', runtime: 'bash', code: `echo run-${i}` }).catch((err: Error) => err)),
    );
    expect(runs.map((r) => (r instanceof Error ? r.message : r.stdout))).toEqual(Array.from({ length: 8 }, (_, i) => `run-${i}\n`));
    await openEngine();
    await waitForMembers(2);
  });

  // The F2 leftover: out of the queue group, it still held its sessions (its heartbeat went on),
  // so every other replica forwarded their calls to it, and they failed until its engine returned.
  it('gives its sessions up: the other replica takes them over from their saved copies and serves them; back, it beats again', { timeout: 120_000 }, async () => {
    await waitForMembers(2);
    const { kv, nc: knc } = await placementKv(a.prefix);
    try {
      const holderOf = async (session: string) => (JSON.parse((await kv.get(placementKeyOf('engine-lost', session)))!.string()) as { holder: string }).holder;
      const onB = (holder: string) => new RegExp(`^${b.instance}-[0-9a-f]{8}$`).test(holder);
      // Sessions land on the replica the queue group gives their first call to: write until two are on b.
      const held: string[] = [];
      for (let i = 0; held.length < 2 && i < 40; i++) {
        const session = `held-${i}`;
        await client.request(sandboxCatalog.filesWrite, { tenant: 'engine-lost', session, path: 'note.txt', content_base64: b64(`note ${i}\n`) });
        if (onB(await holderOf(session))) held.push(session);
      }
      expect(held).toHaveLength(2);

      const replicas = await new Kvm(knc).open(bucketNameOf('', a.prefix, 'replicas'));
      /** b's heartbeat: it keeps beating while out of the queue group, saying it stands down. */
      const beatOfB = async () => {
        for await (const k of await replicas.keys()) if (onB(k)) return JSON.parse((await replicas.get(k))!.string()) as { standing_down?: boolean };
        return undefined;
      };
      expect(await beatOfB()).not.toHaveProperty('standing_down');

      await cutEngine();
      await waitForMembers(1);
      for (const session of held) {
        const ran = await client.request(sandboxCatalog.run, { tenant: 'engine-lost', session, runtime: 'bash', code: 'cat note.txt' });
        expect(ran.stdout).toBe(`note ${session.slice('held-'.length)}\n`);
        expect(onB(await holderOf(session))).toBe(false);
        const read = await client.request(sandboxCatalog.filesRead, { tenant: 'engine-lost', session, path: 'note.txt' });
        expect(unb64(read.content_base64)).toBe(`note ${session.slice('held-'.length)}\n`);
      }

      await expect.poll(async () => (await beatOfB())?.standing_down, { timeout: 10_000 }).toBe(true);
      // Back: it holds sessions again (its heartbeat no longer stands down before it rejoins).
      await openEngine();
      await waitForMembers(2);
      expect(await beatOfB()).not.toHaveProperty('standing_down');
    } finally {
      await knc.close();
    }
  });
});
