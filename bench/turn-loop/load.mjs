#!/usr/bin/env node
// The tool round under an external load generator: autocannon in its own process drives the
// built gateway in catalogue mode with (a) a model that answers with text at once and (b) a model
// that first calls web_search (answered at once over NATS by this process) and then answers the
// same text; beside them (c) a naive Node pipe proxy in front of the same upstream. The upstream
// (its own process) writes each token on its own. Whole-process CPU per request of the gateway
// and of the proxy, medians of rounds that take turns: the tool round's CPU is (b) − (a).
// Usage: node bench/turn-loop/load.mjs [--amount 3000] [--connections 10] [--rounds 3] [--warmup 500] [--tokens 20]
// GATEWAY_B_DIR=<another build's apps/gateway>: that build runs beside this one (its own process,
// billing and key) with the same two catalogue rows, and its tool round is printed too (A/B in one run).
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, loadAverage, median } from '../lib/proc-cpu.mjs';
import { startLoadGenerator } from '../lib/load-client.mjs';
import { startGatewayStack } from '../lib/gateway-stack.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const AMOUNT = numberOption('amount', 3000);
const CONNECTIONS = numberOption('connections', 10);
const ROUNDS = numberOption('rounds', 3);
const WARMUP = numberOption('warmup', 500);
const N = numberOption('tokens', 20);

const children = [];
const forkReady = async (file, args) => {
  const c = fork(resolve(here, file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(c);
  return { child: c, msg: await new Promise((r) => c.once('message', r)) };
};
const upstream = await forkReady('../lib/token-upstream.mjs', []);
const base = `http://127.0.0.1:${upstream.msg.port}/v1`;
const { freePort } = await import(resolve(here, '../../packages/test-support/dist/index.js'));
const naivePort = await freePort();
const naive = await forkReady('../gateway-passthrough/naive-proxy.mjs', [String(naivePort), String(upstream.msg.port)]);
const gateway = await startGatewayStack({
  models: { [`t${N}`]: base, [`tool-t${N}`]: base },
  gatewayDir: process.env.GATEWAY_DIR,
  nodeArgs: (process.env.GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean),
});
const gatewayB = process.env.GATEWAY_B_DIR ? await startGatewayStack({ models: { [`t${N}`]: base, [`tool-t${N}`]: base }, gatewayDir: process.env.GATEWAY_B_DIR }) : undefined;
const gen = await startLoadGenerator();

const want = Array.from({ length: N }, (_, i) => `tok${i} `).join('');
const rows = [];
for (const stream of [false, true]) {
  const body = (model) => JSON.stringify({ model, messages: [{ role: 'user', content: 'q' }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
  const targets = [
    {
      name: 'naive proxy (text)',
      url: `http://127.0.0.1:${naivePort}/v1/chat/completions`,
      pid: naive.child.pid,
      headers: { 'content-type': 'application/json' },
      body: body(`t${N}`),
    },
    { name: 'catalogue, text only', url: `${gateway.url}/v1/chat/completions`, pid: gateway.pid, headers: gateway.headers, body: body(`t${N}`) },
    { name: 'catalogue, 1 tool round', url: `${gateway.url}/v1/chat/completions`, pid: gateway.pid, headers: gateway.headers, body: body(`tool-t${N}`) },
    ...(gatewayB
      ? [
          { name: 'B catalogue, text only', url: `${gatewayB.url}/v1/chat/completions`, pid: gatewayB.pid, headers: gatewayB.headers, body: body(`t${N}`) },
          { name: 'B catalogue, 1 tool round', url: `${gatewayB.url}/v1/chat/completions`, pid: gatewayB.pid, headers: gatewayB.headers, body: body(`tool-t${N}`) },
        ]
      : []),
  ];
  for (const t of targets) {
    const r = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
    const text = await r.text();
    if (r.status !== 200 || !text.replaceAll('\\n', '').includes(stream ? 'tok0 ' : want)) throw new Error(`${t.name}: ${r.status} ${text.slice(0, 300)}`);
    await gen.run({ url: t.url, headers: t.headers, body: t.body, amount: WARMUP, connections: CONNECTIONS });
  }
  const acc = new Map(targets.map((t) => [t.name, { cpu: [], p50: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    // The order turns around every round, so no target always runs first (or right after the same one).
    for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
      const c0 = cpuSeconds(t.pid);
      const r = await gen.run({ url: t.url, headers: t.headers, body: t.body, amount: AMOUNT, connections: CONNECTIONS });
      acc.get(t.name).cpu.push(((cpuSeconds(t.pid) - c0) / r.requests) * 1e6);
      acc.get(t.name).p50.push(r.p50Ms);
    }
  }
  for (const t of targets)
    rows.push({ mode: stream ? 'streaming' : 'non-streaming', target: t.name, cpu: median(acc.get(t.name).cpu), cpus: acc.get(t.name).cpu, p50: median(acc.get(t.name).p50) });
}
console.log(
  `turn-loop/load: autocannon ${CONNECTIONS} connections, ${AMOUNT} requests × ${ROUNDS} rounds after ${WARMUP} warm-up, ${N}-token answers; node ${process.version}; ${new Date().toISOString()}; load average now ${loadAverage()}`,
);
console.log('mode           target                     CPU µs/req (median; rounds)          p50 ms');
for (const r of rows)
  console.log(`${r.mode.padEnd(14)} ${r.target.padEnd(26)} ${r.cpu.toFixed(1).padStart(7)} (${r.cpus.map((x) => x.toFixed(0)).join(', ')})`.padEnd(86) + String(r.p50).padStart(6));
for (const mode of ['non-streaming', 'streaming']) {
  const by = (n) => rows.find((r) => r.mode === mode && r.target === n);
  for (const who of gatewayB ? ['', 'B '] : ['']) {
    const round = by(`${who}catalogue, 1 tool round`).cpu - by(`${who}catalogue, text only`).cpu;
    console.log(
      `${mode}: ${who ? `B (${process.env.GATEWAY_B_DIR}): ` : ''}the tool round costs the gateway ${(round / 1000).toFixed(3)} ms CPU (target <= 1 ms); catalogue text-only = ${(by(`${who}catalogue, text only`).cpu / by('naive proxy (text)').cpu).toFixed(2)}x the naive proxy`,
    );
  }
}
gen.close();
await gatewayB?.stop();
await gateway.stop();
for (const c of children) c.kill('SIGTERM');
process.exit(0);
