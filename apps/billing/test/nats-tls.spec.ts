import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient, natsConnectOptions } from '@drael/nats-rpc';
import { freePort, startBillingForTests, testPrefix, type ServiceProcess } from '@drael/test-support';

/**
 * Issue 17: NATS with credentials and TLS. A nats-server of this test's own (a free port; the
 * shared one is never touched) requires TLS with a client certificate signed by a CA made here
 * (openssl) and a token. The real billing service boots through it with NATS_TOKEN and
 * NATS_TLS_* and answers a typed client configured the same way; a client missing any one of
 * them is refused by the server.
 */
const TOKEN = 'nats-token-for-tests-0123456789';
let dir: string;
let server: ChildProcess;
let url: string;
let billing: ServiceProcess;
const prefix = testPrefix('nats-tls');

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA. */
function makeCertificates(): void {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=drael-test-ca', '-keyout', 'ca.key', '-out', 'ca.pem');
  for (const name of ['server', 'client']) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=drael-test-${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
    writeFileSync(join(dir, `${name}.ext`), name === 'server' ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' : 'extendedKeyUsage=clientAuth\n');
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', `${name}.ext`, '-out', `${name}.pem`);
  }
}

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
  dir = mkdtempSync(join(tmpdir(), 'drael-nats-tls-'));
  makeCertificates();
  const port = await freePort();
  writeFileSync(
    join(dir, 'nats.conf'),
    [
      `listen: 127.0.0.1:${port}`,
      `authorization { token: "${TOKEN}" }`,
      // verify: every client must present a certificate signed by the CA.
      `tls { cert_file: "${join(dir, 'server.pem')}", key_file: "${join(dir, 'server.key')}", ca_file: "${join(dir, 'ca.pem')}", verify: true, timeout: 5 }`,
    ].join('\n'),
  );
  server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], { stdio: 'ignore' });
  await listening(port, Date.now() + 10_000);
  url = `nats://127.0.0.1:${port}`;
  billing = await startBillingForTests({ NATS_URL: url, DRAEL_NATS_PREFIX: prefix }, security());
});

afterAll(async () => {
  await billing?.stop();
  server?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const security = (): Record<string, string> => ({
  NATS_TOKEN: TOKEN,
  NATS_TLS_CA_FILE: join(dir, 'ca.pem'),
  NATS_TLS_CERT_FILE: join(dir, 'client.pem'),
  NATS_TLS_KEY_FILE: join(dir, 'client.key'),
});

describe('NATS with TLS (client certificates) and a token', () => {
  it('a service boots through it and answers a client configured the same way', async () => {
    const client = await NatsRpcClient.connect({ servers: url, prefix, security: security() });
    try {
      const { plans } = await client.request(billingCatalog.listPlans, {});
      expect(plans.map((p) => p.name)).toContain('Free');
      // The connection really is TLS.
      expect(client.connection.info?.tls_required).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a client without the token, without its certificate or without the CA is refused', async () => {
    const { NATS_TOKEN: _t, ...noToken } = security();
    const { NATS_TLS_CERT_FILE: _c, NATS_TLS_KEY_FILE: _k, ...noCert } = security();
    const { NATS_TLS_CA_FILE: _ca, ...noCa } = security();
    for (const [what, s] of [
      ['no token', noToken],
      ['no client certificate', noCert],
      ['no CA (the server certificate cannot be verified)', noCa],
    ] as const) {
      const { connect } = await import('@nats-io/transport-node');
      const attempt = connect({ servers: url, maxReconnectAttempts: 0, reconnect: false, timeout: 3_000, ...natsConnectOptions(s) }).then(async (nc) => {
        await nc.close();
        return 'connected';
      });
      await expect(attempt, what).rejects.toThrow();
    }
  });

  it('a configuration that says too little or too much stops the app at boot, naming the variable', () => {
    expect(() => natsConnectOptions({ NATS_TLS_CERT_FILE: 'client.pem' })).toThrow(/NATS_TLS_KEY_FILE/);
    expect(() => natsConnectOptions({ NATS_TOKEN: 't', NATS_USER: 'u' })).toThrow(/one way/);
    expect(() => natsConnectOptions({ NATS_CREDS_FILE: '/nonexistent/drael.creds' })).toThrow(/NATS_CREDS_FILE/);
  });
});
