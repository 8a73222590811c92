import { describe, expect, it } from 'vitest';
import { currentSpan, currentTraceId, inSpan, startSpan, startTracing, tracingEnabled } from '../src/index.js';

// The SDK's wiring seen through the interface (what is exported is checked against a real OTLP
// receiver in packages/test-support/test/tracing-nats.spec.ts and apps/gateway/test/tracing.spec.ts).
// Nothing is exported here: the spans are not flushed and the endpoint is never reached.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe('tracing on', () => {
  it('nests spans in the current one, carries them across awaits, and formats traceparent', async () => {
    await startTracing({ service: 'test', endpoint: 'http://127.0.0.1:9' });
    expect(tracingEnabled()).toBe(true);
    expect(currentTraceId()).toBeUndefined();
    await inSpan('outer', {}, async (outer) => {
      const [, traceId, spanId] = TRACEPARENT.exec(outer.traceparent!)!;
      expect(outer.traceId).toBe(traceId);
      await new Promise((r) => setTimeout(r, 1));
      expect(currentTraceId()).toBe(traceId);
      expect(currentSpan().traceparent).toBe(outer.traceparent);
      const inner = startSpan('inner', { kind: 'client' });
      expect(inner.traceId).toBe(traceId);
      expect(inner.traceparent).not.toContain(spanId!);
      inner.end();
    });
    expect(currentTraceId()).toBeUndefined();
  });

  it("a server span joins its caller's trace; a malformed or absent traceparent starts a new one", async () => {
    const caller = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
    const joined = startSpan('server', { kind: 'server', parent: caller });
    expect(joined.traceId).toBe('ab'.repeat(16));
    // A server span never nests in whatever happens to be current: its parent is its caller.
    await inSpan('unrelated', {}, async (unrelated) => {
      for (const parent of [undefined, 'garbage', `00-${'0'.repeat(32)}-${'cd'.repeat(8)}-01`]) {
        const fresh = startSpan('server', { kind: 'server', parent });
        expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(fresh.traceId).not.toBe('ab'.repeat(16));
        expect(fresh.traceId).not.toBe(unrelated.traceId);
      }
    });
  });

  it('inSpan rethrows what its function throws', async () => {
    await expect(inSpan('failing', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
