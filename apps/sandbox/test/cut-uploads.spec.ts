import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { b64, placementKeyOf, placementKv, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';
import { bucketNameOf } from '../src/placement/sandbox-stores.js';

/*
 * Issue 19 (chaos finding 5): a replica killed while it uploads a content of a session's save
 * leaves that content's chunks in the Object Store with nothing naming them (an object is named
 * once whole). Every replica sweeps them once their newest chunk is SANDBOX_CUT_UPLOAD_GRACE_S old
 * (3 s here), and never touches a chunk an object names.
 */
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const env = { SANDBOX_REPLICA_TTL_S: '3', SANDBOX_SESSION_QUOTA_MB: '160', SANDBOX_WARM_POOL: '0', SANDBOX_CUT_UPLOAD_GRACE_S: '3' };

let a: Sandbox;
let b: Sandbox;
let client: NatsRpcClient;
let nc: NatsConnection;
let jsm: JetStreamManager;
let store: ObjectStore;
let bucket: string;
beforeAll(async () => {
  a = await startSandbox(env);
  b = await startSandbox(env, { join: a });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix: a.prefix });
  nc = await connect({ servers: NATS_URL });
  jsm = await jetstreamManager(nc);
  bucket = bucketNameOf('', a.prefix, 'workspaces');
  store = await new Objm(nc).open(bucket);
}, 180_000);
afterAll(async () => {
  await client?.close();
  await nc?.close();
  await b?.stop();
  await a?.stop();
});

/** Chunk subjects of the bucket's stream that no object names, with their message counts. */
async function unnamedChunks(): Promise<Map<string, number>> {
  const prefix = `$O.${bucket}.C.`;
  const info = await jsm.streams.info(`OBJ_${bucket}`, { subjects_filter: `${prefix}>` });
  const named = new Set((await store.list()).map((o) => o.nuid));
  return new Map(Object.entries(info.state.subjects ?? {}).filter(([subject]) => !named.has(subject.slice(prefix.length))));
}

describe('an upload cut off by a dying replica', () => {
  it("leaves chunks that are swept once the grace period passed; other sessions' saved contents stay", async () => {
    const kept = { tenant: 'cut', session: 'kept' };
    await client.request(sandboxCatalog.filesWrite, { ...kept, path: 'keep.txt', content_base64: b64('still here\n') });
    const ws = { tenant: 'cut', session: 'big' };
    await client.request(sandboxCatalog.filesWrite, { ...ws, path: 'seed.txt', content_base64: b64('x') });
    const { kv, nc: knc } = await placementKv(a.prefix);
    const holderId = (JSON.parse((await kv.get(placementKeyOf(ws.tenant, ws.session)))!.string()) as { holder: string }).holder;
    await knc.close();
    const holder = new RegExp(`^${b.instance}-[0-9a-f]{8}$`).test(holderId) ? b : a;

    // A run that writes 100 MB of random bytes: its save uploads one content of ~200 chunks.
    const run = client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: 'head -c 100000000 /dev/urandom > big.bin', timeout_s: 60 }).catch((e: unknown) => e);
    let cut: Map<string, number> | undefined;
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      const unnamed = await unnamedChunks();
      if ([...unnamed.values()].some((n) => n >= 5)) {
        // Mid-upload: killed.
        await holder.proc.stop('SIGKILL');
        cut = await unnamedChunks();
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(cut, 'the save never started uploading').toBeDefined();
    expect(cut!.size).toBeGreaterThan(0);
    await run;

    // The survivor's sweep removes them after the grace period.
    await expect.poll(async () => (await unnamedChunks()).size, { timeout: 60_000, interval: 1_000 }).toBe(0);
    // Named contents stay: the other session's file is served (taken over and restored if it was on the dead replica).
    let read: { content_base64: string } | undefined;
    for (let i = 0; i < 120 && !read; i++) {
      read = await client.request(sandboxCatalog.filesRead, { ...kept, path: 'keep.txt' }).catch(async () => {
        await new Promise((r) => setTimeout(r, 250));
        return undefined;
      });
    }
    expect(unb64(read!.content_base64)).toBe('still here\n');
  }, 240_000);
});
