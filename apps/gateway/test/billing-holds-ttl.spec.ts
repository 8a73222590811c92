import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { createTestKey, startBillingForTests, testPrefix, type ServiceProcess, type TestKey } from '@drael/test-support';
import type { GatewayConfig } from '../src/config/config.schema.js';
import { BillingHolds } from '../src/tools/billing-holds.js';
import type { ToolContext } from '../src/tools/server-tool.js';

// A paid call's credit hold lives DRAEL_TOOL_HOLD_TTL_S (the chaos harness sets it short, so its
// "no hold left open after the sweeper's window" check does not wait 5 minutes), against the real
// billing service.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('holdttl');
let billing: ServiceProcess;
let rpc: NatsRpcClient;
let key: TestKey;

beforeAll(async () => {
  billing = await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix });
  rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  key = await createTestKey(rpc, { plan: 'pro' });
}, 120_000);
afterAll(async () => {
  await rpc?.close();
  await billing?.stop();
});

/** The hold `around` took, read back by its idempotency key while the call runs (a replay answers the same hold). */
async function holdTakenWith(ttlS: number) {
  const config = { DRAEL_TOOL_HOLD_TTL_S: ttlS } as GatewayConfig;
  const ctx = { caller: { account_id: key.account_id }, requestId: testPrefix('req'), callId: 'c1', signal: new AbortController().signal } as unknown as ToolContext;
  let hold: { expires_at: string } | undefined;
  const takenAt = Date.now();
  await new BillingHolds(rpc, config).around(ctx, 'breach_lookup', 1, async () => {
    hold = await rpc.request(billingCatalog.hold, { account_id: key.account_id, tool: 'breach_lookup', units: 1, idempotency_key: `${ctx.requestId}:${ctx.callId}`, ttl_s: ttlS });
    return { result: { ok: true }, units: 1 };
  });
  return (Date.parse(hold!.expires_at) - takenAt) / 1000;
}

describe('paid tool holds', () => {
  it('expire after DRAEL_TOOL_HOLD_TTL_S if the gateway never settles them', async () => {
    const lifetime = await holdTakenWith(45);
    expect(lifetime).toBeGreaterThan(40);
    expect(lifetime).toBeLessThanOrEqual(46);
  });
});
