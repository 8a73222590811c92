import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { billingCatalog, healthEntry } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';
import { NATS_URL } from './billing-harness.js';

// Issue 19, item 4: a Postgres that stops answering (a partition: packets dropped, no RST) gets a
// bounded, typed answer from billing (DATABASE_CONNECT_TIMEOUT_MS, DATABASE_STATEMENT_TIMEOUT_MS),
// never a caller held until its own timeout. The partition is a TCP relay to the machine's server
// that the test owns and freezes: it stops moving bytes, both on open connections and new ones.

interface Relay {
  server: Server;
  sockets: Set<Socket>;
  port: number;
  frozen: boolean;
  /** Every connection closed as it opens (a server restarting, or failing over). */
  refusing: boolean;
}
let relay: Relay;
let billing: ServiceProcess;
let client: NatsRpcClient;
const prefix = testPrefix('bpart');
// Far longer than the database bounds below and than this test's own timeout: a caller left
// waiting for it fails the test.
const CALLER_WAITS_MS = 120_000;

async function startRelay(): Promise<Relay> {
  const target = new URL(inject('databaseUrl'));
  const r: Relay = { server: undefined as unknown as Server, sockets: new Set(), port: 0, frozen: false, refusing: false };
  r.server = createServer((inbound) => {
    if (r.refusing) {
      inbound.destroy();
      return;
    }
    r.sockets.add(inbound);
    inbound.on('close', () => r.sockets.delete(inbound));
    inbound.on('error', () => undefined);
    // Frozen: the connection is accepted and then nothing ever comes back (a blackholed peer).
    if (r.frozen) return;
    const outbound = createConnection(Number(target.port || 5432), target.hostname);
    r.sockets.add(outbound);
    outbound.on('close', () => r.sockets.delete(outbound));
    outbound.on('error', () => undefined);
    const forward = (from: Socket, to: Socket) => from.on('data', (d: Buffer) => void (r.frozen || to.write(d)));
    forward(inbound, outbound);
    forward(outbound, inbound);
  });
  await new Promise<void>((res) => r.server.listen(0, '127.0.0.1', res));
  r.port = (r.server.address() as { port: number }).port;
  return r;
}

beforeAll(async () => {
  relay = await startRelay();
  const url = new URL(inject('databaseUrl'));
  url.host = `127.0.0.1:${relay.port}`;
  billing = await startServiceProcess('billing', {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DATABASE_URL: url.toString(),
    DATABASE_POOL_SIZE: '2',
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
    DATABASE_STATEMENT_TIMEOUT_MS: '1000',
    LOG_LEVEL: 'error',
  });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await billing?.stop('SIGKILL');
  for (const s of relay?.sockets ?? []) s.destroy();
  relay?.server.close();
});

/** Whether billing answers a listing again within ~10 s (its pool reconnects on its own). */
async function servesAgain(): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const ok = await client.request(billingCatalog.listAccounts, { limit: 1 }, { timeoutMs: 10_000 }).then(
      () => true,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

describe('billing with its Postgres partitioned', () => {
  it('answers a typed error within its database bounds (open connections and new ones), names postgres in its health, and serves again after', async () => {
    await expect(client.request(billingCatalog.listAccounts, { limit: 1 }, { timeoutMs: CALLER_WAITS_MS })).resolves.toMatchObject({ has_more: expect.any(Boolean) });

    relay.frozen = true;
    // Twice: the first meets a pooled connection that went silent (statement bound), the next
    // ones a connection that never opens (connect bound).
    for (let i = 0; i < 3; i++) {
      const err = await client.request(billingCatalog.listAccounts, { limit: 1 }, { timeoutMs: CALLER_WAITS_MS }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RpcError);
      // Billing's own answer, not the caller giving up; an outage to retry, not a defect.
      expect((err as RpcError).code).toBe('unavailable');
      expect((err as RpcError).retryable).toBe(true);
    }
    const health = await client.request(healthEntry('billing'), {}, { timeoutMs: 5_000 }).catch((e: unknown) => e);
    expect((health as RpcError).details?.checks).toMatchObject({ postgres: expect.stringMatching(/.+/) });
    expect((health as RpcError).details?.checks).not.toMatchObject({ postgres: 'ok' });

    relay.frozen = false;
    for (const s of relay.sockets) s.destroy();
    expect(await servesAgain()).toBe(true);
  }, 90_000);

  it('answers unavailable (never internal) while its Postgres closes every connection, on the Prisma path and on the hot path of key checks, and serves again after', async () => {
    relay.refusing = true;
    for (const s of relay.sockets) s.destroy();
    const listing = await client.request(billingCatalog.listAccounts, { limit: 1 }, { timeoutMs: CALLER_WAITS_MS }).catch((e: unknown) => e);
    const verify = await client.request(billingCatalog.verifyKey, { api_key: `drael_${'x'.repeat(43)}` }, { timeoutMs: CALLER_WAITS_MS }).catch((e: unknown) => e);
    for (const err of [listing, verify]) {
      expect(err).toBeInstanceOf(RpcError);
      expect({ code: (err as RpcError).code, retryable: (err as RpcError).retryable }).toEqual({ code: 'unavailable', retryable: true });
    }
    relay.refusing = false;
    expect(await servesAgain()).toBe(true);
  }, 90_000);
});
