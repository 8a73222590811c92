#!/usr/bin/env node
// CPU per request of tracing's own calls, in one process: a server span, a current-trace lookup
// and a nested client span, as the gateway makes them for a proxied request. Tracing on exports
// to a local OTLP/HTTP receiver (whose decoding runs in this process too); `off` leaves tracing
// off. Spans beyond the SDK's batch queue (2048) are dropped, so export is mostly not counted.
// Usage: node bench/gateway-passthrough/span-cost.mjs [off]   (needs packages/tracing and test-support built)
import { startOtlpReceiver } from '../../packages/test-support/dist/index.js';
import { currentTraceId, inSpan, startSpan, startTracing, stopTracing } from '../../packages/tracing/dist/index.js';

const off = process.argv[2] === 'off';
const receiver = await startOtlpReceiver();
await startTracing({ service: 'span-cost', endpoint: off ? undefined : receiver.url });
const N = 20_000;
async function round() {
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const span = startSpan('GET', { kind: 'server', attributes: { 'http.request.method': 'GET', 'url.path': '/v1/models' } });
    await span.run(async () => {
      currentTraceId();
      await inSpan('upstream bench', { kind: 'client', attributes: { 'gen_ai.request.model': 'bench' } }, async () => 1);
    });
    span.setAttributes({ 'http.response.status_code': 200 });
    span.end();
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / N;
}
await round(); // warm-up
console.log(`tracing ${off ? 'off' : 'on'}: ${(await round()).toFixed(1)} and ${(await round()).toFixed(1)} µs CPU per request (2 spans), ${N} requests per round`);
await stopTracing();
await receiver.close();
