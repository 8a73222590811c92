// What one NATS request costs inside a Drael service, around its handler: the search service's
// cached query (the answer comes from the replica's memory, so the handler does almost nothing)
// sent as a plain JSON request, one at a time with a pause between (a service between requests
// sleeps, as in production), to this build and to a baseline build, interleaved.
//
// Usage: node bench/nats-rpc/dispatch.mjs --baseline /path/to/other/checkout [--n 400] [--pause 20]
// Prints each build's median and p90 round trip and its service's CPU per request (whole process,
// every thread), and the difference. Needs NATS and Redis; SearXNG only for the first (uncached) query.
import '../lib/ends-with-bench.mjs';
import { resolve } from 'node:path';
import { loadavg } from 'node:os';
import { startService } from '../lib/service.mjs';
import { benchPrefix, root } from '../lib/stack-env.mjs';
import { cpuSeconds, median } from '../lib/proc-cpu.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const N = numberOption('n', 400);
const PAUSE_MS = numberOption('pause', 20);
const baseline = option('baseline', undefined);
if (!baseline) throw new Error('--baseline /path/to/other/checkout is required (the peer is measured in the same run)');

const env = (prefix) => ({
  SEARXNG_URL: process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890',
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  SEARCH_CACHE_PREFIX: `bench:${prefix}:`,
  SEARCH_CACHE_TTL_S: '600',
  SEARCH_VERIFY: 'false',
});
const targets = [];
for (const [name, dir] of [
  ['this build', resolve(root, 'apps/search')],
  [`baseline (${baseline})`, resolve(baseline, 'apps/search')],
]) {
  const prefix = benchPrefix('bench-dispatch');
  targets.push({ name, prefix, service: await startService({ app: 'search', prefix, dir, env: env(prefix) }), rtt: [], cpu: 0 });
}
// The raw connection under the first service's typed client: a plain NATS request, as any language sends it.
const nc = targets[0].service.client.connection;
const body = JSON.stringify({ query: 'drael dispatch bench', limit: 3 });
const ask = async (t) => {
  const t0 = performance.now();
  const msg = await nc.request(`${t.prefix}.search.query.v1`, body, { timeout: 15_000 });
  const rtt = performance.now() - t0;
  const reply = msg.json();
  if (!reply.result) throw new Error(`${t.name}: ${msg.string().slice(0, 200)}`);
  return rtt;
};
const pause = () => new Promise((r) => setTimeout(r, PAUSE_MS));

try {
  // The first query fills each replica's cache; the warm-up lets V8 optimise the path.
  for (const t of targets) for (let i = 0; i < 50; i++) await ask(t);
  const load0 = loadavg();
  for (let i = 0; i < N; i++) {
    for (const t of i % 2 ? [...targets].reverse() : targets) {
      await pause();
      const c0 = cpuSeconds(t.service.child.pid);
      t.rtt.push(await ask(t));
      // The answer has left before the client sees it; what the service does after it (metrics) is read on the next pause.
      await pause();
      t.cpu += cpuSeconds(t.service.child.pid) - c0;
    }
  }
  const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor((p / 100) * (xs.length - 1))];
  console.log(
    `bench/nats-rpc/dispatch (${new Date().toISOString()}, node ${process.version}, load ${load0.map((x) => x.toFixed(2)).join(' ')} → ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; n=${N} each, ${PAUSE_MS} ms pauses, interleaved)`,
  );
  console.log('a cached search.query.v1, plain JSON over NATS: round trip at the client, and the service process CPU per request');
  for (const t of targets) {
    console.log(
      `  ${t.name.padEnd(40)} median ${(median(t.rtt) * 1000).toFixed(0).padStart(5)} µs   p90 ${(q(t.rtt, 90) * 1000).toFixed(0).padStart(5)} µs   CPU ${((t.cpu / N) * 1e6).toFixed(0).padStart(5)} µs/request (incl. ${PAUSE_MS} ms of idle wake-ups)`,
    );
  }
  const [a, b] = targets;
  console.log(`  this build − baseline: median ${((median(a.rtt) - median(b.rtt)) * 1000).toFixed(0)} µs, CPU ${(((a.cpu - b.cpu) / N) * 1e6).toFixed(0)} µs/request`);
} finally {
  for (const t of targets) await t.service.stop();
}
