import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { createTestKey, startBillingForTests, testPrefix, unreadFromNats, type ServiceProcess, type TestKey } from '@drael/test-support';
import type { GatewayConfig } from '../src/config/config.schema.js';
import { BillingHolds } from '../src/tools/billing-holds.js';
import type { ToolContext } from '../src/tools/server-tool.js';

// Chaos runs 5 and 7 (bench/chaos/README.md): a paid call the client saw charged expired
// uncharged, because the billing replica that took its settle was SIGKILLed before it sent its
// first heartbeat. Here two real billing replicas share the queue group; both are frozen (SIGSTOP)
// before the settle is sent, the one the settle was delivered to (the bytes wait unread in its
// NATS socket, `ss` shows them) is killed, the other resumed. The settle must still land.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('holdretry');
let replicas: ServiceProcess[] = [];
let rpc: NatsRpcClient;
let key: TestKey;

beforeAll(async () => {
  replicas = [await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix }), await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix })];
  rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  key = await createTestKey(rpc, { plan: 'pro' });
}, 120_000);
afterAll(async () => {
  for (const r of replicas) r.child.kill('SIGCONT');
  await rpc?.close();
  for (const r of replicas) await r.stop('SIGKILL');
});

/** Once the settle sits unread at one frozen replica: that one is killed, the other resumed. */
async function killTheReceiver(frozen: ServiceProcess[]): Promise<ServiceProcess> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    for (const r of frozen) {
      if ((await unreadFromNats(r.child.pid!, NATS_URL)) > 0) {
        // Gone before anything else is asked: until the process has exited (its socket closed),
        // NATS may still give the next request of the queue group to it, and that request would
        // time out unheard.
        const exited = r.child.exitCode !== null || r.child.signalCode !== null ? Promise.resolve() : once(r.child, 'exit');
        r.child.kill('SIGKILL');
        await exited;
        for (const o of frozen) if (o !== r) o.child.kill('SIGCONT');
        return r;
      }
    }
    await new Promise((res) => setTimeout(res, 20));
  }
  for (const o of frozen) o.child.kill('SIGCONT');
  throw new Error('the settle reached neither billing replica');
}

describe('a paid call settled while billing replicas die', () => {
  it('is settled by a surviving replica when the one that took the settle is killed before answering or heartbeating', async () => {
    const ctx = { caller: { account_id: key.account_id }, requestId: testPrefix('req'), callId: 'c1', signal: new AbortController().signal } as unknown as ToolContext;
    const holds = new BillingHolds(rpc, { DRAEL_TOOL_HOLD_TTL_S: 120 } as GatewayConfig);
    let killed: Promise<ServiceProcess> | undefined;
    let holdId: string | undefined;
    const result = await holds.around(ctx, 'breach_lookup', 1, async () => {
      holdId = (
        await rpc.request(billingCatalog.hold, { account_id: key.account_id, tool: 'breach_lookup', units: 1, idempotency_key: `${ctx.requestId}:${ctx.callId}`, ttl_s: 120 })
      ).hold_id;
      // The tool ran; both replicas freeze before the gateway sends the settle.
      for (const r of replicas) r.child.kill('SIGSTOP');
      killed = killTheReceiver(replicas);
      return { result: { ok: true }, units: 1 };
    });
    expect(result).toEqual({ ok: true });
    const dead = await killed!;
    replicas = replicas.filter((r) => r !== dead);

    // Released now if the settle never landed; a settled hold answers that it is already settled.
    const probe = await rpc.request(billingCatalog.release, { account_id: key.account_id, hold_id: holdId! }).then(
      (h) => ({ status: `released by the probe (was ${h.status === 'released' ? 'held' : h.status})` }),
      // Any other error says what it was, not only that a status is missing.
      (err: unknown) =>
        (err as RpcError).code === 'hold_already_resolved' ? ((err as RpcError).details as { status: string }) : { status: `${(err as RpcError).code}: ${(err as Error).message}` },
    );
    expect(probe.status).toBe('settled');
  }, 60_000);

  it('is settled in the background when no billing answers the settle at all, once one is back within the TTL; the result is not held back', async () => {
    const ctx = { caller: { account_id: key.account_id }, requestId: testPrefix('req'), callId: 'c2', signal: new AbortController().signal } as unknown as ToolContext;
    const holds = new BillingHolds(rpc, { DRAEL_TOOL_HOLD_TTL_S: 120 } as GatewayConfig);
    const usedBefore = (await rpc.request(billingCatalog.usage, { account_id: key.account_id })).allowances.lookups.used;
    const result = await holds.around(ctx, 'breach_lookup', 1, async () => {
      // The provider was called and answered; then every billing replica is gone (no responders).
      for (const r of replicas) await r.stop('SIGKILL');
      replicas = [];
      return { result: { ok: true }, units: 1 };
    });
    expect(result).toEqual({ ok: true });
    // Billing back a little later (a restart): the settle, still being sent, lands, and the units are charged.
    replicas.push(await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix }));
    await expect
      .poll(async () => (await rpc.request(billingCatalog.usage, { account_id: key.account_id })).allowances.lookups, { timeout: 60_000, interval: 500 })
      .toMatchObject({ used: usedBefore + 1, held: 0 });
  }, 120_000);
});
