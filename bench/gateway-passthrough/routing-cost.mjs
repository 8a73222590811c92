// What model routing adds per proxied request, in CPU time, without sockets: the built gateway's
// UpstreamClient.dispatch (RoutePlan, chooser, RoutedDispatch, the per-deployment body and
// timeouts) against the plain handoff the proxy made before routing (one Pool.dispatch of the
// handler), both driven by the same in-process stand-in for undici's pool that calls the handler
// back at once (request start, 200 head, 16 chunks, end). The difference is routing's own cost,
// free of the network and of load-induced noise in the end-to-end run (see README).
//
//   pnpm --filter @drael/gateway build && node bench/gateway-passthrough/routing-cost.mjs [--iterations 2000000]
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberOption } from '../lib/cli-options.mjs';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const dist = (p) => resolve(root, 'apps/gateway/dist', p);
const { configSchema } = await import(dist('config/config.schema.js'));
const { ModelRegistry } = await import(dist('models/model-registry.js'));
const { ModelRouter } = await import(dist('upstream/model-router.service.js'));
const { UpstreamClient } = await import(dist('upstream/upstream.client.js'));

const iterations = numberOption('iterations', 2_000_000);

const config = configSchema.parse({
  DRAEL_MODELS: JSON.stringify({ 'bench-model': { base_url: 'http://127.0.0.1:9/v1', api_key: 'k', model: 'bench-model' } }),
});
const registry = new ModelRegistry(config);
const router = new ModelRouter(registry, config); // Redis is only reached in onModuleInit, never called here
const client = new UpstreamClient(config, router);
const route = registry.resolve('bench-model');

const chunk = Buffer.from('data: {"choices":[{"delta":{"content":"x"}}]}\n\n');
const headers = { 'content-type': 'text/event-stream' };
const controller = { pause() {}, resume() {}, abort() {} };
/** undici's Pool.dispatch, answered at once. */
const fakePool = {
  dispatch(_options, handler) {
    handler.onRequestStart(controller, {});
    handler.onResponseStart(controller, 200, headers, 'OK');
    for (let i = 0; i < 16; i++) handler.onResponseData(controller, chunk);
    handler.onResponseEnd(controller, {});
    return true;
  },
};
client.poolFor = () => fakePool;

let sunk = 0;
const sink = {
  onAttempt() {},
  onAccepted() {
    sunk++;
  },
  onData() {},
  onEnd() {},
  onError(err) {
    throw err;
  },
  onFailure(err) {
    throw err;
  },
};
// The proxy handler's callbacks before routing (same work as the sink, as a DispatchHandler).
const plainHandler = {
  onRequestStart() {},
  onResponseStart() {
    sunk++;
  },
  onResponseData() {},
  onResponseEnd() {},
  onResponseError(_c, err) {
    throw err;
  },
};
const rawBody = Buffer.from(JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'hi' }], stream: true }));

function routed() {
  // As ChatCompletionsService builds it per request.
  const bodyFor = (m) => (m === 'bench-model' ? rawBody : JSON.stringify({ model: m }));
  client.dispatch(route, { path: '/chat/completions', bodyFor, requestId: 'r', accept: 'text/event-stream' }, sink);
}
function plain() {
  const headersOut = { 'content-type': 'application/json', accept: 'text/event-stream', 'x-request-id': 'r', authorization: 'Bearer k' };
  fakePool.dispatch({ method: 'POST', path: '/v1/chat/completions', headers: headersOut, body: rawBody }, plainHandler);
}

function time(fn) {
  for (let i = 0; i < 200_000; i++) fn(); // warm-up (JIT)
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / iterations; // ns per request
}

const rounds = [];
for (let r = 0; r < 5; r++) rounds.push({ plain: time(plain), routed: time(routed) });
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p = median(rounds.map((x) => x.plain));
const q = median(rounds.map((x) => x.routed));
console.log(`routing-cost: ${iterations} requests x 5 rounds, node ${process.version}`);
console.log(
  `plain handoff: ${p.toFixed(0)} ns/request; routed dispatch: ${q.toFixed(0)} ns/request; routing adds ${((q - p) / 1000).toFixed(2)} µs CPU per request (target <= 20 µs)`,
);
if (sunk === 0) throw new Error('nothing ran');
