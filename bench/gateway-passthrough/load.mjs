#!/usr/bin/env node
// What users run, under an external load generator: autocannon in its own process drives
// (a) a naive Node pipe proxy, (b) the gateway in proxy mode (x-drael-server-tools: 0), and
// (c) the gateway in catalogue mode (no client tools: the turn loop, Drael's catalogue offered,
// the model answers with text at once), all in front of one upstream process that streams each
// token as its own write. Per target, mode (non-streaming, streaming) and answer length (20, 200
// tokens): whole-process CPU per request of the target and of the upstream, in rounds that take
// turns; the medians of the rounds and the ratio to the naive proxy of the same run.
// Usage: node bench/gateway-passthrough/load.mjs [--amount 5000] [--connections 10] [--rounds 3]
//        [--warmup-seconds 10 | --warmup <requests>] [--tokens 20,200] [--targets naive,proxy,catalogue] [--modes non-streaming,streaming]
//        [--rate <requests per second>: a fixed pace; the same batching for every target, so less spread]
// GATEWAY_B_DIR=<another build's apps/gateway>: that build runs beside this one (its own process,
// billing and key) as the targets `proxy B` and `catalogue B` (added to --targets unless named
// there), and each row also prints the per-round ratio catalogue ÷ catalogue B (A/B in one run).
// GATEWAY_B_NODE_ARGS: Node flags for B alone (B may be this same build: a V8 flag's A/B).
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, loadAverage, median } from '../lib/proc-cpu.mjs';
import { startLoadGenerator } from '../lib/load-client.mjs';
import { startGatewayStack } from '../lib/gateway-stack.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const AMOUNT = numberOption('amount', 5000);
const CONNECTIONS = numberOption('connections', 10);
const ROUNDS = numberOption('rounds', 3);
// Each target's warm-up before each row's rounds: 10 s of load by default, or --warmup requests.
// The gateway's per-request code is optimised by V8 only after thousands of calls, and its young
// generation grows to size over the first ~800 MB of allocation; 1,000 requests (the default
// until 2026-12-05) timed catalogue mode's first rounds at 2-3x its settled CPU (README, "Target
// 1 read on a warm gateway"). 10 s is 35,000-80,000 whole answers and 2,000-3,000 200-token streams here.
const WARMUP = numberOption('warmup', undefined);
const WARMUP_SECONDS = numberOption('warmup-seconds', 10);
const warmupLoad = WARMUP === undefined ? { duration: WARMUP_SECONDS } : { amount: WARMUP };
const warmupText = WARMUP === undefined ? `${WARMUP_SECONDS} s` : `${WARMUP} requests'`;
// Requests per second over all connections (autocannon's overallRate); unset: as fast as answered.
const RATE = numberOption('rate', undefined);
const TOKENS = option('tokens', '20,200').split(',').map(Number);
const B_DIR = process.env.GATEWAY_B_DIR;
const TARGETS = option('targets', B_DIR ? 'naive,proxy,catalogue,proxyB,catalogueB' : 'naive,proxy,catalogue').split(',');
if (!B_DIR && TARGETS.some((t) => t.endsWith('B'))) throw new Error('targets proxyB and catalogueB need GATEWAY_B_DIR');
// `--modes non-streaming` or `--modes streaming`: one of the two only (a profile of one path).
const STREAM_MODES = option('modes', 'non-streaming,streaming')
  .split(',')
  .map((m) => m === 'streaming');

const children = [];
const forkReady = async (file, args) => {
  const c = fork(resolve(here, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(c);
  return { child: c, msg: await new Promise((r) => c.once('message', r)) };
};

const upstream = await forkReady('../lib/token-upstream.mjs', []);
const upstreamPort = upstream.msg.port;
const { freePort } = await import(resolve(here, '../../packages/test-support/dist/index.js'));
const naivePort = await freePort();
const naive = await forkReady('naive-proxy.mjs', [String(naivePort), String(upstreamPort)]);
const models = Object.fromEntries(TOKENS.map((n) => [`t${n}`, `http://127.0.0.1:${upstreamPort}/v1`]));
const gateway = await startGatewayStack({ models, gatewayDir: process.env.GATEWAY_DIR, nodeArgs: (process.env.GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean) });
const gatewayB = B_DIR ? await startGatewayStack({ models, gatewayDir: B_DIR, nodeArgs: (process.env.GATEWAY_B_NODE_ARGS ?? '').split(' ').filter(Boolean) }) : undefined;
const gen = await startLoadGenerator();

const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Count, one token at a time.' },
];
const bodyOf = (n, stream) =>
  JSON.stringify({ model: `t${n}`, messages: MESSAGES, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), max_tokens: 512, temperature: 0 });
const targetDefs = {
  naive: { name: 'naive proxy', url: `http://127.0.0.1:${naivePort}/v1/chat/completions`, pid: naive.child.pid, headers: { 'content-type': 'application/json' } },
  proxy: { name: 'gateway proxy mode', url: `${gateway.url}/v1/chat/completions`, pid: gateway.pid, headers: { ...gateway.headers, 'x-drael-server-tools': '0' } },
  catalogue: { name: 'gateway catalogue', url: `${gateway.url}/v1/chat/completions`, pid: gateway.pid, headers: gateway.headers },
  ...(gatewayB
    ? {
        proxyB: { name: 'B proxy mode', url: `${gatewayB.url}/v1/chat/completions`, pid: gatewayB.pid, headers: { ...gatewayB.headers, 'x-drael-server-tools': '0' } },
        catalogueB: { name: 'B catalogue', url: `${gatewayB.url}/v1/chat/completions`, pid: gatewayB.pid, headers: gatewayB.headers },
      }
    : {}),
};
const targets = TARGETS.map((t) => targetDefs[t]);

// Every target must give the answer the model gave before its CPU means anything. Each check has
// a deadline: a target that never answers stops the bench with its name instead of stalling it
// (one run on 2026-12-02 stalled silently before this line's output and was not reproduced).
for (const n of TOKENS) {
  const want = Array.from({ length: n }, (_, i) => `tok${i} `).join('');
  for (const t of targets) {
    for (const stream of STREAM_MODES) {
      const r = await fetch(t.url, { method: 'POST', headers: t.headers, body: bodyOf(n, stream), signal: AbortSignal.timeout(30_000) }).catch((err) => {
        throw new Error(`${t.name} t${n} stream=${stream}: no answer (${err.name === 'TimeoutError' ? 'none within 30 s' : err.message})`);
      });
      const text = await r.text();
      const got = stream
        ? text
            .split('\n')
            .filter((l) => l.startsWith('data: {'))
            .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '')
            .join('')
        : JSON.parse(text).choices?.[0]?.message?.content;
      if (r.status !== 200 || got !== want) throw new Error(`${t.name} t${n} stream=${stream}: ${r.status} ${text.slice(0, 300)}`);
    }
  }
}

const load0 = loadAverage();
console.log(
  `gateway-passthrough/load: autocannon ${CONNECTIONS} connections, ${AMOUNT} requests × ${ROUNDS} rounds per row after ${warmupText} warm-up; node ${process.version}; ${new Date().toISOString()}; load average ${load0}`,
);
const rows = [];
for (const n of TOKENS) {
  for (const stream of STREAM_MODES) {
    const body = bodyOf(n, stream);
    const acc = new Map(targets.map((t) => [t.name, { cpu: [], up: [], rps: [], p50: [], p99: [] }]));
    for (const t of targets) await gen.run({ url: t.url, headers: t.headers, body, ...warmupLoad, connections: CONNECTIONS, rate: RATE });
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns around every round, so no target always runs first (or right after the same one).
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
        const c0 = cpuSeconds(t.pid);
        const u0 = cpuSeconds(upstream.child.pid);
        const r = await gen.run({ url: t.url, headers: t.headers, body, amount: AMOUNT, connections: CONNECTIONS, rate: RATE });
        const a = acc.get(t.name);
        a.cpu.push(((cpuSeconds(t.pid) - c0) / r.requests) * 1e6);
        a.up.push(((cpuSeconds(upstream.child.pid) - u0) / r.requests) * 1e6);
        a.rps.push(r.rps);
        a.p50.push(r.p50Ms);
        a.p99.push(r.p99Ms);
      }
    }
    for (const t of targets) {
      const a = acc.get(t.name);
      rows.push({
        tokens: n,
        mode: stream ? 'streaming' : 'non-streaming',
        target: t.name,
        cpu: median(a.cpu),
        cpus: a.cpu,
        up: median(a.up),
        rps: median(a.rps),
        p50: median(a.p50),
        p99: median(a.p99),
      });
    }
    console.log(`  done ${n} tokens ${stream ? 'streaming' : 'non-streaming'} (load ${loadAverage()})`);
  }
}
console.log(`\nload average at start ${load0}, at end ${loadAverage()}`);
const abRatios = [];
console.log('tokens  mode           target               CPU µs/req (median; rounds)         ratio  upstream µs/req  req/s  p50 ms  p99 ms');
for (const r of rows) {
  const naiveRow = rows.find((x) => x.tokens === r.tokens && x.mode === r.mode && x.target === 'naive proxy');
  const ratio = naiveRow ? (r.cpu / naiveRow.cpu).toFixed(2) + 'x' : '-';
  console.log(
    `${String(r.tokens).padEnd(7)} ${r.mode.padEnd(14)} ${r.target.padEnd(20)} ${r.cpu.toFixed(1).padStart(7)} (${r.cpus.map((x) => x.toFixed(0)).join(', ')})`.padEnd(86) +
      `${ratio.padStart(6)} ${r.up.toFixed(1).padStart(16)} ${r.rps.toFixed(0).padStart(6)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}`,
  );
}
for (const r of rows.filter((x) => x.target === 'gateway catalogue')) {
  const b = rows.find((x) => x.tokens === r.tokens && x.mode === r.mode && x.target === 'B catalogue');
  if (!b) continue;
  // Per round: both measured in the same round, so the machine's drift between rounds cancels.
  const ratios = r.cpus.map((c, i) => c / b.cpus[i]);
  abRatios.push(`${r.tokens} tokens ${r.mode}: catalogue ÷ catalogue B per round median ${median(ratios).toFixed(3)} (${ratios.map((x) => x.toFixed(2)).join(', ')})`);
}
if (abRatios.length) console.log(`A/B (B = ${B_DIR}):\n  ${abRatios.join('\n  ')}`);
gen.close();
await gatewayB?.stop();
await gateway.stop();
for (const c of children) c.kill('SIGTERM');
process.exit(0);
