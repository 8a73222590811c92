#!/usr/bin/env node
// 500 concurrent streaming chats through one gateway against a slow scripted upstream (issue 19,
// item 6). The upstream (bench/lib/token-upstream.mjs, its own process) streams each token in its
// own write, paced like a model (--gap-ms); the load comes from a process of its own
// (bench/lib/stream-load-generator.mjs), which reads every stream to its end and judges it. Three
// targets take turns in each round, at the same concurrency:
//   direct      the upstream itself (the floor: what a client gets without the gateway);
//   proxy       a gateway in proxy mode (x-drael-server-tools: 0);
//   catalogue   a second gateway in catalogue mode (no client tools: Drael's catalogue is offered,
//               the model answers with text).
// Each gateway is its own process with its own billing (for its key), so its memory and CPU are
// its mode's alone. Figures: streams dropped (and why), time to first byte and to first token
// p50/p99 and what the gateway adds over direct, the gateway's RSS per open stream (RSS at the
// plateau minus RSS idle after a warm-up, divided by the streams the gateway holds by its own
// drael_gateway_open_streams gauge, read every 500 ms), its whole-process CPU per request, and its
// open file descriptors at the plateau.
// Usage: node bench/load/run.mjs [--streams 500] [--tokens 30] [--gap-ms 50:100] [--duration-s 20]
//        [--rounds 2] [--ramp-ms 2000] [--targets direct,proxy,catalogue] [--upstream-connections N]
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, loadAverage, median, rssBytes } from '../lib/proc-cpu.mjs';
import { startStreamLoad } from '../lib/load-client.mjs';
import { startGatewayStack } from '../lib/gateway-stack.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const STREAMS = numberOption('streams', 500);
const TOKENS = numberOption('tokens', 30);
const GAP = option('gap-ms', '50:100');
const DURATION_MS = numberOption('duration-s', 20) * 1000;
const ROUNDS = numberOption('rounds', 2);
const RAMP_MS = numberOption('ramp-ms', 2000);
const TARGETS = option('targets', 'direct,proxy,catalogue').split(',');
const UPSTREAM_CONNECTIONS = option('upstream-connections', undefined);

const children = [];
const upstreamChild = fork(resolve(here, '../lib/token-upstream.mjs'), ['0', '--gap-ms', GAP], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
children.push(upstreamChild);
const upstreamPort = (await new Promise((r) => upstreamChild.once('message', r))).port;
const base = `http://127.0.0.1:${upstreamPort}/v1`;
const model = `t${TOKENS}`;
const { freePort } = await import(resolve(here, '../../packages/test-support/dist/index.js'));

const gatewayEnv = async () => ({ METRICS_PORT: String(await freePort()), ...(UPSTREAM_CONNECTIONS ? { UPSTREAM_CONNECTIONS } : {}) });
const stacks = [];
const gatewayFor = async () => {
  const env = await gatewayEnv();
  const stack = await startGatewayStack({ models: { [model]: base }, gatewayDir: process.env.GATEWAY_DIR, env });
  stacks.push(stack);
  return { ...stack, metricsUrl: `http://127.0.0.1:${env.METRICS_PORT}/metrics` };
};
const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'q' }] });
const targets = [];
for (const name of TARGETS) {
  if (name === 'direct') targets.push({ name, url: `${base}/chat/completions`, headers: { 'content-type': 'application/json' } });
  else if (name === 'proxy' || name === 'catalogue') {
    const gw = await gatewayFor();
    const headers = name === 'proxy' ? { ...gw.headers, 'x-drael-server-tools': '0' } : gw.headers;
    targets.push({ name, url: `${gw.url}/v1/chat/completions`, headers, gateway: gw });
  } else throw new Error(`unknown target ${name}`);
}
const gen = await startStreamLoad();
children.push(gen.child);
const expectText = Array.from({ length: TOKENS }, (_, i) => `tok${i} `).join('');
const load = (t, opts, onSample) => gen.run({ url: t.url, headers: t.headers, body, expectText, ...opts }, onSample);

const openFds = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const fdLimit = (pid) =>
  /^Max open files\s+(\S+)\s+(\S+)/m
    .exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))
    .slice(1, 3)
    .join(' / ');
/** drael_gateway_open_streams{mode} from the gateway's /metrics (the gateway's own count). */
async function gatewayOpenStreams(metricsUrl, mode) {
  const text = await (await fetch(metricsUrl)).text();
  return Number(new RegExp(`^drael_gateway_open_streams\\{mode="${mode}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
}

// Warm-up (code loaded, key verified and cached, JIT), then each gateway's idle RSS.
for (const t of targets) {
  const r = await load(t, { connections: 20, durationMs: 3000, rampMs: 500 });
  if (r.ok === 0 || r.ok !== r.requests) throw new Error(`${t.name}: warm-up dropped ${r.requests - r.ok} of ${r.requests}: ${r.examples.join('; ')}`);
}
await new Promise((r) => setTimeout(r, 2000));
for (const t of targets) if (t.gateway) t.idleRss = rssBytes(t.gateway.pid);

const startedAt = new Date().toISOString();
const loadAtStart = loadAverage();
const rows = new Map(targets.map((t) => [t.name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const t of targets) {
    const pid = t.gateway?.pid;
    // Every other sample (500 ms): the streams the gateway itself has open (its own gauge: a stream
    // counts from its head on, so one waiting for an upstream connection does not), its RSS and fds.
    const samples = [];
    let tick = 0;
    const cpu0 = pid ? cpuSeconds(pid) : 0;
    const r = await load(t, { connections: STREAMS, durationMs: DURATION_MS, rampMs: RAMP_MS }, ({ open }) => {
      if (!pid || tick++ % 2) return;
      void gatewayOpenStreams(t.gateway.metricsUrl, t.name).then((gatewayOpen) => samples.push({ open, gatewayOpen, rss: rssBytes(pid), fds: openFds(pid) }));
    });
    const row = { round, ...r };
    if (pid) {
      row.cpuMsPerRequest = ((cpuSeconds(pid) - cpu0) / r.requests) * 1000;
      // The plateau: samples where the gateway holds at least 90 % of the most streams it held.
      const most = Math.max(...samples.map((x) => x.gatewayOpen));
      const plateau = samples.filter((x) => x.gatewayOpen >= 0.9 * most && x.gatewayOpen > 0);
      row.plateauSamples = plateau.length;
      row.plateauRss = median(plateau.map((x) => x.rss));
      row.maxRss = Math.max(...plateau.map((x) => x.rss));
      row.plateauOpen = median(plateau.map((x) => x.gatewayOpen));
      row.rssPerStreamKiB = median(plateau.map((x) => (x.rss - t.idleRss) / x.gatewayOpen / 1024));
      row.mid = { fds: median(plateau.map((x) => x.fds)), gatewayOpen: row.plateauOpen, clientOpen: median(plateau.map((x) => x.open)) };
    }
    rows.get(t.name).push(row);
    const d = Object.entries(r.dropped)
      .filter(([, n]) => n)
      .map(([k, n]) => `${k} ${n}`);
    console.error(
      `round ${round} ${t.name}: ${r.ok}/${r.requests} ok${d.length ? ` (dropped: ${d.join(', ')})` : ''}, max open ${r.maxOpen}, ttfb p50 ${r.ttfbMs.p50.toFixed(1)} p99 ${r.ttfbMs.p99.toFixed(1)} ms, ttft p50 ${r.ttftMs.p50.toFixed(1)} p99 ${r.ttftMs.p99.toFixed(1)} ms` +
        (pid
          ? `, CPU ${row.cpuMsPerRequest.toFixed(3)} ms/req; plateau (${row.plateauSamples} samples): gateway holds ${row.plateauOpen} streams (client ${row.mid.clientOpen}), RSS ${(row.plateauRss / 2 ** 20).toFixed(1)} MiB (idle ${(t.idleRss / 2 ** 20).toFixed(1)}), ${row.rssPerStreamKiB.toFixed(1)} KiB/stream, fds ${row.mid.fds}`
          : '') +
        `; load ${loadAverage()}`,
    );
    for (const e of r.examples) console.error(`  ${e}`);
  }
}

const f1 = (x) => x.toFixed(1);
const med = (xs) => median(xs.filter((x) => Number.isFinite(x)));
console.log(
  `load: ${STREAMS} concurrent streams × ${DURATION_MS / 1000} s × ${ROUNDS} rounds per target (ramp ${RAMP_MS} ms), ${TOKENS} tokens, first token ${GAP.split(':')[0]} ms then ${GAP} ms apart; ` +
    `UPSTREAM_CONNECTIONS=${UPSTREAM_CONNECTIONS ?? 'default'}; node ${process.version}; ${startedAt}; load average at start ${loadAtStart}, at end ${loadAverage()}`,
);
if (targets.some((t) => t.gateway)) console.log(`gateway fd limit (soft / hard): ${fdLimit(targets.find((t) => t.gateway).gateway.pid)}`);
console.log('target      requests   dropped  TTFB p50 / p99 ms    TTFT p50 / p99 ms    CPU ms/req  RSS idle → plateau MiB  KiB/stream  fds  gw open');
const direct = rows.get('direct');
for (const t of targets) {
  const rs = rows.get(t.name);
  const dropped = rs.reduce((n, r) => n + (r.requests - r.ok), 0);
  const line = [
    t.name.padEnd(10),
    String(rs.reduce((n, r) => n + r.requests, 0)).padStart(9),
    String(dropped).padStart(9),
    `${f1(med(rs.map((r) => r.ttfbMs.p50)))} / ${f1(med(rs.map((r) => r.ttfbMs.p99)))}`.padStart(19),
    `${f1(med(rs.map((r) => r.ttftMs.p50)))} / ${f1(med(rs.map((r) => r.ttftMs.p99)))}`.padStart(20),
  ];
  if (t.gateway)
    line.push(
      med(rs.map((r) => r.cpuMsPerRequest))
        .toFixed(3)
        .padStart(11),
      `${f1(t.idleRss / 2 ** 20)} → ${f1(med(rs.map((r) => r.plateauRss)) / 2 ** 20)}`.padStart(23),
      f1(med(rs.map((r) => r.rssPerStreamKiB))).padStart(11),
      String(rs.at(-1).mid?.fds ?? '-').padStart(5),
      String(rs.at(-1).mid?.gatewayOpen ?? '-').padStart(8),
    );
  console.log(line.join(' '));
}
if (direct) {
  for (const t of targets.filter((x) => x.gateway)) {
    const rs = rows.get(t.name);
    // Per round against the same round's direct figures, then the median of rounds.
    const added = (key, q) => f1(med(rs.map((r, i) => r[key][q] - direct[i][key][q])));
    console.log(
      `${t.name}: adds to time to first token p50 ${added('ttftMs', 'p50')} ms, p99 ${added('ttftMs', 'p99')} ms; to first byte p50 ${added('ttfbMs', 'p50')} ms, p99 ${added('ttfbMs', 'p99')} ms (median of rounds)`,
    );
  }
}
console.log(`rounds: ${JSON.stringify([...rows].map(([name, rs]) => ({ name, rounds: rs.map(({ examples, ...r }) => r) })))}`);

gen.close();
for (const s of stacks) await s.stop();
for (const c of children) c.kill('SIGTERM');
process.exit(0);
