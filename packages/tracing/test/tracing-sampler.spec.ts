import { afterEach, describe, expect, it } from 'vitest';
import { inSpan, startSpan, startTracing, stopTracing } from '../src/index.js';

// OTEL_TRACES_SAMPLER through the SDK's samplers, seen through the interface: what a span's
// traceparent says (the sampled flag) is what every downstream receives. Nothing is exported
// here (the endpoint is never reached); apps/gateway/test/tracing.spec.ts checks the export.
const ENDPOINT = 'http://127.0.0.1:9';
const parent = (flags: '00' | '01') => `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-${flags}`;
const flagsOf = (traceparent: string | undefined) => traceparent?.split('-')[3];

afterEach(async () => {
  await stopTracing();
});

describe('sampling', () => {
  it("traceidratio 0 samples nothing, not even a sampled caller's trace, but keeps its trace id for the spans it starts", async () => {
    await startTracing({ service: 'test', endpoint: ENDPOINT, sampler: { name: 'traceidratio', ratio: 0 } });
    const server = startSpan('server', { kind: 'server', parent: parent('01') });
    expect(server.traceId).toBe('ab'.repeat(16));
    expect(flagsOf(server.traceparent)).toBe('00');
    await server.run(() =>
      inSpan('child', { kind: 'client' }, async (child) => {
        expect(child.traceId).toBe('ab'.repeat(16));
        expect(flagsOf(child.traceparent)).toBe('00');
      }),
    );
    server.end();
    expect(flagsOf(startSpan('root', { kind: 'server' }).traceparent)).toBe('00');
  });

  it("parentbased_traceidratio 0: a new trace is not sampled, a caller's decision is followed either way", async () => {
    await startTracing({ service: 'test', endpoint: ENDPOINT, sampler: { name: 'parentbased_traceidratio', ratio: 0 } });
    expect(flagsOf(startSpan('root', { kind: 'server' }).traceparent)).toBe('00');
    expect(flagsOf(startSpan('sampled caller', { kind: 'server', parent: parent('01') }).traceparent)).toBe('01');
    expect(flagsOf(startSpan('unsampled caller', { kind: 'server', parent: parent('00') }).traceparent)).toBe('00');
  });

  it('the default (parentbased_always_on) samples a new trace; always_off samples none', async () => {
    await startTracing({ service: 'test', endpoint: ENDPOINT });
    expect(flagsOf(startSpan('root', { kind: 'server' }).traceparent)).toBe('01');
    expect(flagsOf(startSpan('unsampled caller', { kind: 'server', parent: parent('00') }).traceparent)).toBe('00');
    await stopTracing();
    await startTracing({ service: 'test', endpoint: ENDPOINT, sampler: { name: 'always_off' } });
    expect(flagsOf(startSpan('sampled caller', { kind: 'server', parent: parent('01') }).traceparent)).toBe('00');
  });

  it("a consumer span (queued work picked up later) joins its producer's stored trace", async () => {
    await startTracing({ service: 'test', endpoint: ENDPOINT });
    const run = startSpan('agent run', { kind: 'consumer', parent: parent('01') });
    expect(run.traceId).toBe('ab'.repeat(16));
    expect(startSpan('agent run', { kind: 'consumer' }).traceId).not.toBe('ab'.repeat(16));
  });
});
