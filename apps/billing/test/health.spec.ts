/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { healthEntry } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { freePort, startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';
import { NATS_URL } from './billing-harness.js';

// billing's health checks its real dependency (issue 17): with its Postgres gone, both the NATS
// health subject and the HTTP health port name `postgres`. "Its Postgres" here is a TCP relay to
// the machine's server that the test owns and closes (the shared Postgres is never stopped).

let relay: { server: Server; sockets: Set<Socket>; port: number };
let billing: ServiceProcess;
let client: NatsRpcClient;
let healthPort: number;
const prefix = testPrefix('bhealth');

async function startRelay(): Promise<typeof relay> {
  const target = new URL(inject('databaseUrl'));
  const sockets = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = createConnection(Number(target.port || 5432), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, sockets, port: (server.address() as { port: number }).port };
}

beforeAll(async () => {
  relay = await startRelay();
  const url = new URL(inject('databaseUrl'));
  url.host = `127.0.0.1:${relay.port}`;
  healthPort = await freePort();
  billing = await startServiceProcess('billing', {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DATABASE_URL: url.toString(),
    DATABASE_POOL_SIZE: '2',
    HEALTH_PORT: String(healthPort),
    LOG_LEVEL: 'error',
  });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await billing?.stop();
  for (const s of relay?.sockets ?? []) s.destroy();
  relay?.server.close();
});

const http = async (path: string) => {
  const r = await fetch(`http://127.0.0.1:${healthPort}${path}`);
  return { status: r.status, body: (await r.json()) as any };
};

describe('billing health', () => {
  it('with Postgres answering: ok over NATS (postgres: ok) and on the HTTP port', async () => {
    const reply = await client.request(healthEntry('billing'), {}, { timeoutMs: 5_000 });
    expect(reply).toMatchObject({ service: 'billing', status: 'ok', checks: { postgres: 'ok' } });
    expect(await http('/healthz')).toEqual({ status: 200, body: { status: 'ok', service: 'billing' } });
    const ready = await http('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', failing: [], checks: { nats: 'ok', postgres: 'ok' } });
  });

  it('with Postgres unreachable: the NATS answer is a typed unavailable naming postgres, /readyz 503 names it, /healthz stays 200', async () => {
    relay.server.close();
    for (const s of relay.sockets) s.destroy();
    const err = await client.request(healthEntry('billing'), {}, { timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRpcError(err), billing.output()).toBe(true);
    expect((err as any).code).toBe('unavailable');
    expect((err as any).message).toMatch(/postgres: /);
    expect((err as any).details.failing).toEqual(['postgres']);
    const ready = await http('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.status).toBe('not_ready');
    expect(ready.body.failing).toEqual(['postgres']);
    expect(ready.body.checks.nats).toBe('ok');
    expect(ready.body.checks.postgres).not.toBe('ok');
    // Liveness never asks a dependency: a dead database must not restart the pod.
    expect((await http('/healthz')).status).toBe(200);
  });
});
