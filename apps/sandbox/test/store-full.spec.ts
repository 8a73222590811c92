import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { cleanSandboxInstance, startOwnNats, startServiceProcess, testPrefix, type OwnServer, type ServiceProcess } from '@drael/test-support';

// One tenant's saved sessions fill the sandbox's session store (multi-replica pass, F3). The saved
// workspaces have a bound of their own (SANDBOX_STORE_MAX_MB) below the NATS server's JetStream
// storage, so the placement records keep room: another tenant's calls are still placed and run,
// and a write the store cannot take is answered as what it is, never as "the session is being
// moved between replicas". A nats-server of this test's own, with 64 MB of JetStream storage.
let server: OwnServer;
let sandbox: ServiceProcess;
let client: NatsRpcClient;
const prefix = testPrefix('sbx-full');
const instance = `test-${prefix.slice(4)}`;
const stateDir = `/var/lib/drael/sandbox-test/${instance}`;

beforeAll(async () => {
  server = await startOwnNats({ jetstream: { maxFileStore: '64MB' }, maxPayload: '8MB' });
  const url = server.url;
  sandbox = await startServiceProcess(
    'sandbox',
    {
      NATS_URL: url,
      DRAEL_NATS_PREFIX: prefix,
      SANDBOX_INSTANCE: instance,
      SANDBOX_STATE_DIR: stateDir,
      SANDBOX_WARM_POOL: '0',
      SANDBOX_SESSION_QUOTA_MB: '32',
      SANDBOX_STORE_MAX_MB: '24',
      LOG_LEVEL: 'error',
    },
    { readyTimeoutMs: 60_000 },
  );
  client = await NatsRpcClient.connect({ servers: url, prefix });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await sandbox?.stop('SIGKILL');
  await cleanSandboxInstance(instance, stateDir);
  await server?.dispose();
});

describe("one tenant's saved sessions fill the session store", () => {
  it("that tenant is told the store is full; another tenant's new session and request workspace are placed and run", async () => {
    const refusals: RpcError[] = [];
    for (let i = 0; i < 6 && refusals.length === 0; i++) {
      try {
        await client.request(sandboxCatalog.run, { tenant: 'tenant-x', session: `x-${i}`, runtime: 'bash', code: 'head -c 9000000 /dev/urandom > blob.bin; echo saved' });
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        refusals.push(err);
      }
    }
    // 24 MB hold two 9 MB sessions, not three.
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.message).not.toContain('being moved between replicas');
    expect(refusals[0]!.message).toContain('session store (NATS JetStream) is full');

    const inRequest = await client.request(sandboxCatalog.run, { tenant: 'tenant-y', session: 'req-1', scope: 'request', runtime: 'bash', code: 'echo request-ran' });
    expect(inRequest).toMatchObject({ ok: true, stdout: 'request-ran\n' });
    const placed = await client.request(sandboxCatalog.run, { tenant: 'tenant-y', session: 'y-1', runtime: 'bash', code: 'echo placed' }).catch((err: RpcError) => err);
    // Placed and run here; its (empty) save may or may not fit what X left: either the answer, or the store's own refusal.
    if (placed instanceof RpcError) expect(placed.message).toContain('session store');
    else expect(placed).toMatchObject({ ok: true, stdout: 'placed\n' });
    const sessionless = await client.request(sandboxCatalog.run, { tenant: 'tenant-y', runtime: 'python', code: 'print(6*7)' });
    expect(sessionless).toMatchObject({ ok: true, stdout: '42\n' });
  });
});
