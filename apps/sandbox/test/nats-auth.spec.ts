import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { cleanSandboxInstance, startOwnNats, startServiceProcess, testPrefix, type OwnServer, type ServiceProcess } from '@drael/test-support';

// The sandbox behind a NATS that asks every client for credentials, as the production overlay's
// does (k8s/README.md "NATS credentials and TLS"). Every connection the sandbox opens must carry
// them: its queue-group server, its cancel listener and its JetStream stores (session placement,
// saved workspaces). The stores once connected without them, and the sandbox could not boot
// (multi-replica pass, F1). A nats-server of this test's own, with JetStream and a token.
const TOKEN = 'nats-token-for-sandbox-tests-0123';
let server: OwnServer;
let sandbox: ServiceProcess;
let client: NatsRpcClient;
const prefix = testPrefix('sbx-auth');
const instance = `test-${prefix.slice(4)}`;
const stateDir = `/var/lib/drael/sandbox-test/${instance}`;

beforeAll(async () => {
  server = await startOwnNats({ args: ['--auth', TOKEN] });
  const url = server.url;
  sandbox = await startServiceProcess(
    'sandbox',
    { NATS_URL: url, NATS_TOKEN: TOKEN, DRAEL_NATS_PREFIX: prefix, SANDBOX_INSTANCE: instance, SANDBOX_STATE_DIR: stateDir, SANDBOX_WARM_POOL: '0', LOG_LEVEL: 'warn' },
    { readyTimeoutMs: 60_000 },
  );
  client = await NatsRpcClient.connect({ servers: url, prefix, security: { NATS_TOKEN: TOKEN } });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await sandbox?.stop('SIGKILL');
  await cleanSandboxInstance(instance, stateDir);
  await server?.dispose();
});

describe('the sandbox behind a NATS that requires a token', () => {
  it('boots, runs code in a session (placed and saved in JetStream) and reads the session back', async () => {
    const tenant = 'team-auth';
    const run = await client.request(sandboxCatalog.run, { tenant, session: 'notes', runtime: 'python', code: "open('a.txt','w').write('kept'); print(6*7)" });
    expect(run).toMatchObject({ ok: true, stdout: '42\n' });
    const file = await client.request(sandboxCatalog.filesRead, { tenant, session: 'notes', path: 'a.txt' });
    expect(Buffer.from(file.content_base64, 'base64').toString()).toBe('kept');
  });
});
