import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, type RpcEntry } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { createTestKey, startBillingForTests, testPrefix, type ServiceProcess, type TestKey } from '@drael/test-support';
import type { GatewayConfig } from '../src/config/config.schema.js';
import { BillingHolds } from '../src/tools/billing-holds.js';
import type { ToolContext } from '../src/tools/server-tool.js';

// Attack F5 (h-probe2): the gateway asks billing for a paid tool's hold and never hears the answer
// (the reply lost, or the client hanging up while the create is in flight). It tells the model the
// tool did not run and charges nothing, but billing did make the hold: it counted against the
// allowance until its TTL (300 s), and an account at its last unit was refused a tool that never
// ran. Real billing, NATS and PostgreSQL; the reply is lost the way billing-holds-retry.spec.ts
// loses one: our own billing replica is frozen (SIGSTOP) while the create waits unread in its
// socket, and resumed once the gateway has given up on it.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const TTL_S = 300;
// Far below the TTL: the hold must come back because the gateway released it, not because it expired.
const POLL = { timeout: 30_000, interval: 250 };
const prefix = testPrefix('holdorphan');
let billing: ServiceProcess;
let rpc: NatsRpcClient;

beforeAll(async () => {
  billing = await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix });
  rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
}, 120_000);
afterAll(async () => {
  billing?.child.kill('SIGCONT');
  await rpc?.close();
  await billing?.stop();
});

/** A pro account (100 lookups a week) left with one lookup: a hold it never used would refuse its next call. */
async function accountAtItsLastLookup(): Promise<TestKey> {
  const key = await createTestKey(rpc, { plan: 'pro' });
  const spent = await rpc.request(billingCatalog.hold, { account_id: key.account_id, tool: 'breach_lookup', units: 99, idempotency_key: 'spent', ttl_s: TTL_S });
  await rpc.request(billingCatalog.settle, { account_id: key.account_id, hold_id: spent.hold_id, units: 99 });
  return key;
}

/**
 * The test's client, recording each answer billing gives the gateway's release by key. Only once it
 * has answered is the account's state final: until then billing may still be taking the create it
 * read after SIGCONT (its usage can read `held: 0` before that create commits, and 1 after it).
 * Whichever of the two lands first, nothing stays held once the release has answered
 * (sql/functions/billing_release_by_key.sql).
 */
function recordingReleases(): { client: NatsRpcClient; released: unknown[] } {
  const released: unknown[] = [];
  const client = {
    request: (entry: RpcEntry, payload: never, options?: object) =>
      rpc.request(entry, payload, options).then((reply: unknown) => {
        if (entry === billingCatalog.releaseByKey) released.push(reply);
        return reply;
      }),
  } as unknown as NatsRpcClient;
  return { client, released };
}

const contextFor = (key: TestKey, signal = new AbortController().signal) =>
  ({ caller: { account_id: key.account_id }, requestId: testPrefix('req'), callId: 'c1', signal }) as unknown as ToolContext;
const lookups = async (key: TestKey) => (await rpc.request(billingCatalog.usage, { account_id: key.account_id })).allowances.lookups;

/** A paid call whose tool must never run (its credit was not held). */
async function callNeverRunning(holds: BillingHolds, ctx: ToolContext) {
  let ran = false;
  const result = await holds.around(ctx, 'breach_lookup', 1, async () => {
    ran = true;
    return { result: { ok: true }, units: 1 };
  });
  return { result, ran };
}

/** The account's next paid call goes through (the last unit was given back) and is charged. */
async function nextCallRuns(key: TestKey) {
  const result = await new BillingHolds(rpc, { DRAEL_TOOL_HOLD_TTL_S: TTL_S } as GatewayConfig).around(contextFor(key), 'breach_lookup', 1, async () => ({
    result: { ok: true },
    units: 1,
  }));
  expect(result).toEqual({ ok: true });
  expect(await lookups(key)).toMatchObject({ used: 100, held: 0 });
}

describe('a hold whose create got no answer is released by the gateway, not left to its TTL', () => {
  it('the create reply lost (billing frozen past the timeout, then back): the hold billing made is released, nothing is charged', async () => {
    const key = await accountAtItsLastLookup();
    const { client: billingClient, released } = recordingReleases();
    const holds = new BillingHolds(billingClient, { DRAEL_TOOL_HOLD_TTL_S: TTL_S } as GatewayConfig);
    billing.child.kill('SIGSTOP');
    let call: Awaited<ReturnType<typeof callNeverRunning>>;
    try {
      call = await callNeverRunning(holds, contextFor(key));
    } finally {
      // The create, unread until now, is taken and the hold made; its reply goes nowhere.
      billing.child.kill('SIGCONT');
    }
    expect(call.ran).toBe(false);
    expect(call.result).toMatchObject({ ok: false });
    await expect.poll(() => released.length, POLL).toBe(1);
    expect(await lookups(key)).toMatchObject({ used: 99, held: 0 });
    await nextCallRuns(key);
  }, 60_000);

  it('the client hangs up while the create is in flight: the hold is released, nothing is charged', async () => {
    const key = await accountAtItsLastLookup();
    const { client: billingClient, released } = recordingReleases();
    const holds = new BillingHolds(billingClient, { DRAEL_TOOL_HOLD_TTL_S: TTL_S } as GatewayConfig);
    const client = new AbortController();
    billing.child.kill('SIGSTOP');
    let call: Awaited<ReturnType<typeof callNeverRunning>>;
    try {
      setTimeout(() => client.abort(), 300);
      call = await callNeverRunning(holds, contextFor(key, client.signal));
    } finally {
      billing.child.kill('SIGCONT');
    }
    expect(call.ran).toBe(false);
    expect(call.result).toMatchObject({ ok: false, why: expect.stringMatching(/aborted by the caller/) as unknown });
    await expect.poll(() => released.length, POLL).toBe(1);
    expect(await lookups(key)).toMatchObject({ used: 99, held: 0 });
    await nextCallRuns(key);
  }, 60_000);

  it('a create arriving at billing after the release takes nothing: it answers a released hold', async () => {
    const key = await accountAtItsLastLookup();
    // The create is held back in transit and its caller told it timed out; it is delivered only
    // after the gateway's release has landed (a slow hop, a redelivery). Everything else goes through.
    let lateCreate: (() => Promise<unknown>) | undefined;
    const released: unknown[] = [];
    const slowHop = {
      request: (entry: RpcEntry, payload: Record<string, unknown>, options?: object) => {
        if (entry === billingCatalog.hold) {
          lateCreate = () => rpc.request(billingCatalog.hold, payload as never);
          return Promise.reject(new RpcError('timeout', 'billing: no reply within 2000 ms', true));
        }
        return rpc.request(entry, payload as never, options).then((reply: unknown) => {
          if (entry === billingCatalog.releaseByKey) released.push(reply);
          return reply;
        });
      },
    } as unknown as NatsRpcClient;
    const call = await callNeverRunning(new BillingHolds(slowHop, { DRAEL_TOOL_HOLD_TTL_S: TTL_S } as GatewayConfig), contextFor(key));
    expect(call.ran).toBe(false);
    await expect.poll(() => released.length, POLL).toBe(1);
    expect(await lateCreate!()).toMatchObject({ status: 'released' });
    expect(await lookups(key)).toMatchObject({ used: 99, held: 0 });
    await nextCallRuns(key);
  }, 60_000);
});
