import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient, wireSubject } from '@drael/nats-rpc';
import { currentTraceId, inSpan, startTracing, stopTracing } from '@drael/tracing';
import { createTestKey, startBillingForTests, startOtlpReceiver, testPrefix, type OtlpReceiver, type ReceivedSpan, type ServiceProcess } from '../src/index.js';

// Issue 18, traces across NATS against the real billing service: the typed client carries its
// span in a `traceparent` header and the handler decorator restores it (the service's span is the
// client's child); a plain JSON request (any language's NATS client) that sends the header joins
// that trace too, one without it starts a new trace; a hold has its own span under its handler's.
// This test process traces too (service drael-test), exporting to the same receiver.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('trace');
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

let receiver: OtlpReceiver;
let billing: ServiceProcess;
let typed: NatsRpcClient;
let raw: NatsConnection;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  await startTracing({ service: 'test', endpoint: receiver.url, scheduleDelayMs: 100 });
  billing = await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix }, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  typed = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  raw = await connect({ servers: NATS_URL });
}, 120_000);

afterAll(async () => {
  await typed?.close();
  await raw?.close();
  await billing?.stop();
  await stopTracing();
  await receiver?.close();
});

const serverSpan = (subject: string, traceId: string) => (all: readonly ReceivedSpan[]) =>
  all.find((s) => s.service === 'drael-billing' && s.kind === 'server' && s.name === subject && s.traceId === traceId);

describe('traceparent over NATS', () => {
  it("the typed client's span is the parent of the service's handler span, in the caller's trace", async () => {
    const traceId = await inSpan('caller', {}, async () => {
      await typed.request(billingCatalog.listPlans, {});
      return currentTraceId()!;
    });
    const spans = await receiver.waitFor((all) => serverSpan('billing.plans.list.v1', traceId)(all) !== undefined && all.some((s) => s.name === 'caller' && s.traceId === traceId));
    const caller = spans.find((s) => s.name === 'caller' && s.traceId === traceId)!;
    const client = spans.find((s) => s.name === 'billing.plans.list.v1' && s.kind === 'client' && s.traceId === traceId)!;
    const server = serverSpan('billing.plans.list.v1', traceId)(spans)!;
    expect(client.service).toBe('drael-test');
    expect(client.parentSpanId).toBe(caller.spanId);
    expect(server.parentSpanId).toBe(client.spanId);
    expect(server.attributes).toMatchObject({ 'rpc.system': 'nats', 'rpc.service': 'billing' });
  });

  it('a plain JSON request with a traceparent header joins that trace; without one, the handler starts a new trace', async () => {
    const traceId = hex(16);
    const parent = hex(8);
    const h = natsHeaders();
    h.set('traceparent', `00-${traceId}-${parent}-01`);
    const msg = await raw.request(wireSubject(billingCatalog.listPlans.subject, prefix), JSON.stringify({}), { timeout: 10_000, headers: h });
    expect(msg.json<{ result?: unknown }>().result).toBeDefined();
    const joined = serverSpan('billing.plans.list.v1', traceId)(await receiver.waitFor((all) => serverSpan('billing.plans.list.v1', traceId)(all) !== undefined))!;
    expect(joined.parentSpanId).toBe(parent);

    const known = new Set(receiver.spans.map((s) => s.spanId));
    await raw.request(wireSubject(billingCatalog.listPlans.subject, prefix), JSON.stringify({}), { timeout: 10_000 });
    const fresh = (await receiver.waitFor((all) => all.some((s) => !known.has(s.spanId) && s.service === 'drael-billing' && s.name === 'billing.plans.list.v1'))).find(
      (s) => !known.has(s.spanId) && s.name === 'billing.plans.list.v1',
    )!;
    expect(fresh.parentSpanId).toBe('');
    expect(fresh.traceId).not.toBe(traceId);
    expect(receiver.spans.filter((s) => s.traceId === fresh.traceId && s.service !== 'drael-billing')).toEqual([]);
  });

  it('a hold has its span under its handler, with the outcome', async () => {
    const key = await createTestKey(typed, { plan: 'pro' });
    const traceId = await inSpan('caller', {}, async () => {
      await typed.request(billingCatalog.hold, { account_id: key.account_id, tool: 'generate_image', units: 1, idempotency_key: hex(8), ttl_s: 60 });
      return currentTraceId()!;
    });
    const spans = await receiver.waitFor((all) => all.some((s) => s.name === 'hold' && s.traceId === traceId) && serverSpan('billing.holds.create.v1', traceId)(all) !== undefined);
    const hold = spans.find((s) => s.name === 'hold' && s.traceId === traceId)!;
    expect(hold.service).toBe('drael-billing');
    expect(hold.parentSpanId).toBe(serverSpan('billing.holds.create.v1', traceId)(spans)!.spanId);
    expect(hold.attributes).toMatchObject({ 'drael.billing.tool': 'generate_image', 'drael.billing.outcome': 'created' });
  });
});
