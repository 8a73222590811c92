import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { cleanSandboxInstance, freePort, startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';

// The sandbox behind a NATS that asks every client for credentials, as the production overlay's
// does (k8s/README.md "NATS credentials and TLS"). Every connection the sandbox opens must carry
// them: its queue-group server, its cancel listener and its JetStream stores (session placement,
// saved workspaces). The stores once connected without them, and the sandbox could not boot
// (multi-replica pass, F1). A nats-server of this test's own, with JetStream and a token.
const TOKEN = 'nats-token-for-sandbox-tests-0123';
let dir: string;
let server: ChildProcess;
let url: string;
let sandbox: ServiceProcess;
let client: NatsRpcClient;
const prefix = testPrefix('sbx-auth');
const instance = `test-${prefix.slice(4)}`;
const stateDir = `/var/lib/drael/sandbox-test/${instance}`;

async function listening(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((res) => {
      const s = tcpConnect(port, '127.0.0.1', () => (s.end(), res(true)));
      s.once('error', () => res(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the test nats-server did not listen');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'drael-sbx-nats-auth-'));
  const port = await freePort();
  server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, '--auth', TOKEN], { stdio: 'ignore' });
  await listening(port, Date.now() + 10_000);
  url = `nats://127.0.0.1:${port}`;
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
  server?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
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
