import { describe, expect, it } from 'vitest';
import { currentSpan, currentTraceId, inSpan, startSpan, startTracing, traceRequests, tracingEnabled } from '../src/index.js';

// OTEL_EXPORTER_OTLP_ENDPOINT unset (or empty): nothing is started and every call is a pass-through.
describe('tracing off', () => {
  it('starts no SDK: no OpenTelemetry global is registered, the listener is handed back as it is', async () => {
    await startTracing({ service: 'test', endpoint: undefined });
    await startTracing({ service: 'test', endpoint: '' });
    expect(tracingEnabled()).toBe(false);
    // @opentelemetry/api keeps its registrations (context manager, tracer provider) under this global.
    expect(
      Object.getOwnPropertySymbols(globalThis)
        .map(String)
        .filter((s) => s.includes('opentelemetry')),
    ).toEqual([]);
    const listener = () => {};
    expect(traceRequests(listener)).toBe(listener);
  });

  it('spans are the one shared no-op span; inSpan only calls its function', async () => {
    const span = startSpan('x', { kind: 'client' });
    expect(span.traceparent).toBeUndefined();
    expect(span).toBe(currentSpan());
    expect(await inSpan('y', {}, async (s) => (s === span ? (currentTraceId() ?? 'no trace') : 'other'))).toBe('no trace');
    await expect(inSpan('z', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });
});
