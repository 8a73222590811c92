#!/usr/bin/env node
// Gateway passthrough benchmark: the same scripted upstream served (a) directly, (b) through a
// naive Node pipe proxy, (c) through the built gateway, each proxy in its own process.
// Reports CPU seconds per request of the proxy process (from /proc/<pid>/stat) and time to first
// byte at concurrency 1, non-streaming and streaming. Loopback only; bounded counts.
// Usage: node bench/gateway-passthrough/run.mjs [--requests 2000] [--ttfb 300] [--concurrency 8]
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import http from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startOtlpReceiver } from '../../packages/test-support/dist/index.js';
import { spawnGateway, startBillingWithKey } from '../lib/gateway-stack.mjs';
import { cpuSeconds } from '../lib/proc-cpu.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CPU_REQUESTS = numberOption('requests', 2000);
const TTFB_REQUESTS = numberOption('ttfb', 300);
const CONCURRENCY = numberOption('concurrency', 8);
const WARMUP = numberOption('warmup', 300);

const children = [];

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Count to sixteen, one token at a time.' },
];

/** One request; resolves with { ttfbMs, bytes }. */
function once(port, stream, headers) {
  const body = JSON.stringify({ model: 'bench', messages: MESSAGES, stream, max_tokens: 64, temperature: 0 });
  return new Promise((resolveP, reject) => {
    const t0 = process.hrtime.bigint();
    let ttfb;
    let bytes = 0;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        if (res.statusCode !== 200) {
          // Say which target failed and how (its error envelope): a bench that stops on "status 500" alone explains nothing.
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () =>
            reject(new Error(`POST /v1/chat/completions on port ${port} (stream ${stream}): status ${res.statusCode} ${res.headers['x-request-id'] ?? ''} ${text.slice(0, 500)}`)),
          );
          return;
        }
        res.on('data', (c) => {
          if (ttfb === undefined) ttfb = Number(process.hrtime.bigint() - t0) / 1e6;
          bytes += c.length;
        });
        res.on('end', () => resolveP({ ttfbMs: ttfb, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** GET /v1/models (the guard, Fastify and Nest, no upstream); resolves with its latency in ms. */
function getModels(port, headers) {
  return new Promise((resolveP, reject) => {
    const t0 = process.hrtime.bigint();
    http
      .get({ host: '127.0.0.1', port, path: '/v1/models', agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET /v1/models on port ${port}: status ${res.statusCode}`));
        res.resume();
        res.on('end', () => resolveP({ ttfbMs: Number(process.hrtime.bigint() - t0) / 1e6 }));
      })
      .on('error', reject);
  });
}

async function load(port, stream, headers, count, concurrency, one = () => once(port, stream, headers)) {
  let next = 0;
  const results = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        results.push(await one());
      }
    }),
  );
  return results;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];

// --- start the three targets --------------------------------------------------------------
const upstreamProc = fork(resolve(here, 'upstream.mjs'), [], { stdio: 'inherit' });
children.push(upstreamProc);
const upstreamPort = await new Promise((r) => upstreamProc.once('message', (m) => r(m.port)));

const naivePort = await freePort();
const naive = fork(resolve(here, 'naive-proxy.mjs'), [String(naivePort), String(upstreamPort)], { stdio: 'inherit' });
children.push(naive);
await new Promise((r) => naive.once('message', r));

const gatewayOptions = {
  prefix: `bench-${process.pid}`,
  env: {
    DRAEL_MODELS: JSON.stringify({ bench: { base_url: `http://127.0.0.1:${upstreamPort}/v1`, model: 'bench' } }),
    DRAEL_BACKEND_SERVICES: 'agent-run',
  },
};
// GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": node flags for the gateway process (profiling).
const gatewayNodeArgs = (process.env.GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const gateway = await spawnGateway({ ...gatewayOptions, dir: process.env.GATEWAY_DIR, nodeArgs: gatewayNodeArgs });
children.push(gateway.child);

// Every /v1 route needs an API key: DRAEL_BENCH_API_KEY, or a fresh account's key from the real
// billing service started here on the gateway's NATS prefix (as the tests do).
let apiKey = process.env.DRAEL_BENCH_API_KEY;
if (!apiKey) {
  const billing = await startBillingWithKey({ prefix: gatewayOptions.prefix });
  children.push(billing.child);
  apiKey = billing.apiKey;
}
const gatewayHeaders = {
  'x-drael-server-tools': '0', // a plain proxied completion, not the server-side tool loop
  authorization: `Bearer ${apiKey}`,
};
const targets = [
  { name: 'direct', port: upstreamPort, pid: undefined, headers: {} },
  { name: 'naive proxy', port: naivePort, pid: naive.pid, headers: {} },
  { name: 'gateway', port: gateway.port, pid: gateway.pid, headers: gatewayHeaders },
];
// GATEWAY_B_DIR=<another checkout's apps/gateway> adds a second gateway build to the same run (A/B).
// GATEWAY_B_ENV='{"METRICS_ENABLED":"false"}' gives gateway B extra environment (the same build, one setting changed).
// GATEWAY_B_TRACING=1: gateway B (this build when GATEWAY_B_DIR is unset) runs with tracing on,
// exporting to a local OTLP/HTTP receiver in this process (the cost of tracing on).
let receiver;
if (process.env.GATEWAY_B_TRACING === '1') receiver = await startOtlpReceiver();
if (process.env.GATEWAY_B_DIR || process.env.GATEWAY_B_ENV || receiver) {
  const b = await spawnGateway({
    ...gatewayOptions,
    dir: process.env.GATEWAY_B_DIR ?? process.env.GATEWAY_DIR,
    env: { ...gatewayOptions.env, ...JSON.parse(process.env.GATEWAY_B_ENV ?? '{}'), ...(receiver ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } : {}) },
  });
  children.push(b.child);
  targets.push({ name: 'gateway B', port: b.port, pid: b.pid, headers: gatewayHeaders });
}

// --- measure --------------------------------------------------------------------------------
// Targets take turns in ROUNDS short rounds, so drift in the machine's load (other work on a
// shared machine) spreads evenly over them instead of favouring whichever ran in a quiet spell.
const ROUNDS = numberOption('rounds', 5);
console.log(
  `gateway-passthrough: ${CPU_REQUESTS} requests at concurrency ${CONCURRENCY} for CPU and ${TTFB_REQUESTS} at concurrency 1 for TTFB per target and mode, in ${ROUNDS} interleaved rounds, after ${WARMUP} warm-up; node ${process.version}, ${new Date().toISOString()}`,
);
const rows = [];
for (const stream of [false, true]) {
  const acc = new Map(targets.map((t) => [t.name, { cpu: 0, wall: 0, ttfbs: [] }]));
  for (const t of targets) await load(t.port, stream, t.headers, WARMUP, CONCURRENCY);
  for (let round = 0; round < ROUNDS; round++) {
    // Every other round in reverse order: no target always runs right after another.
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      const a = acc.get(t.name);
      const cpu0 = t.pid ? cpuSeconds(t.pid) : 0;
      const started = process.hrtime.bigint();
      await load(t.port, stream, t.headers, Math.ceil(CPU_REQUESTS / ROUNDS), CONCURRENCY);
      a.wall += Number(process.hrtime.bigint() - started) / 1e9;
      if (t.pid) {
        const spent = cpuSeconds(t.pid) - cpu0;
        a.cpu += spent;
        (a.rounds ??= []).push(spent);
      }
      a.ttfbs.push(...(await load(t.port, stream, t.headers, Math.ceil(TTFB_REQUESTS / ROUNDS), 1)).map((r) => r.ttfbMs));
    }
  }
  const n = Math.ceil(CPU_REQUESTS / ROUNDS) * ROUNDS;
  for (const t of targets) {
    const a = acc.get(t.name);
    rows.push({
      mode: stream ? 'streaming' : 'non-streaming',
      target: t.name,
      rounds: a.rounds,
      cpuPerReqUs: t.pid ? (a.cpu / n) * 1e6 : undefined,
      rps: n / a.wall,
      ttfbMedian: median(a.ttfbs),
      ttfbP90: p90(a.ttfbs),
    });
  }
}

// Authenticated GET /v1/models on the gateway(s): CPU per request and latency at concurrency 1.
const gateways = targets.filter((t) => t.name.startsWith('gateway'));
const models = new Map(gateways.map((t) => [t.name, { cpu: 0, lat: [] }]));
const modelsOf = (t) => () => getModels(t.port, t.headers);
for (const t of gateways) await load(t.port, false, t.headers, WARMUP, CONCURRENCY, modelsOf(t));
for (let round = 0; round < ROUNDS; round++) {
  for (const t of round % 2 ? [...gateways].reverse() : gateways) {
    const m = models.get(t.name);
    const cpu0 = cpuSeconds(t.pid);
    await load(t.port, false, t.headers, Math.ceil(CPU_REQUESTS / ROUNDS), CONCURRENCY, modelsOf(t));
    const spent = cpuSeconds(t.pid) - cpu0;
    m.cpu += spent;
    (m.rounds ??= []).push(spent);
    m.lat.push(...(await load(t.port, false, t.headers, Math.ceil(TTFB_REQUESTS / ROUNDS), 1, modelsOf(t))).map((r) => r.ttfbMs));
  }
}

const fmt = (x, d = 1) => (x === undefined ? '-' : x.toFixed(d));
console.log('\nmode           target        CPU µs/req   req/s   TTFB median ms   TTFB p90 ms');
for (const r of rows) {
  console.log(
    `${r.mode.padEnd(14)} ${r.target.padEnd(13)} ${fmt(r.cpuPerReqUs).padStart(10)} ${fmt(r.rps, 0).padStart(7)} ${fmt(r.ttfbMedian, 3).padStart(16)} ${fmt(r.ttfbP90, 3).padStart(13)}`,
  );
}
console.log('');
for (const mode of ['non-streaming', 'streaming']) {
  const by = (name) => rows.find((r) => r.mode === mode && r.target === name);
  if (by('gateway B')) console.log(`${mode}: gateway B CPU/request = ${(by('gateway B').cpuPerReqUs / by('naive proxy').cpuPerReqUs).toFixed(2)}x naive proxy`);
  const ratio = by('gateway').cpuPerReqUs / by('naive proxy').cpuPerReqUs;
  const addedTtfb = by('gateway').ttfbMedian - by('direct').ttfbMedian;
  const naiveAdded = by('naive proxy').ttfbMedian - by('direct').ttfbMedian;
  console.log(
    `${mode}: gateway CPU/request = ${ratio.toFixed(2)}x naive proxy (target <= 1.5x ${ratio <= 1.5 ? 'MET' : 'MISSED'}); ` +
      `added TTFB median = ${addedTtfb.toFixed(3)} ms over direct (naive proxy adds ${naiveAdded.toFixed(3)} ms; target <= 1 ms ${addedTtfb <= 1 ? 'MET' : 'MISSED'})`,
  );
}
// A/B: the ratio gateway ÷ gateway B of each round's CPU, both measured in the same round; its
// median and quartiles say how far apart the builds are and how much the machine's noise spreads
// it (an A/A run, GATEWAY_B_DIR=$PWD/apps/gateway, shows the noise alone).
const pairedRatios = (a, b) => a.map((x, i) => x / b[i]).sort((x, y) => x - y);
const quartiles = (xs) => [xs[Math.floor((xs.length - 1) / 4)], median(xs), xs[Math.ceil(((xs.length - 1) * 3) / 4)]].map((x) => x.toFixed(3));
for (const mode of ['non-streaming', 'streaming']) {
  const a = rows.find((r) => r.mode === mode && r.target === 'gateway');
  const b = rows.find((r) => r.mode === mode && r.target === 'gateway B');
  if (!b) continue;
  const r = quartiles(pairedRatios(a.rounds, b.rounds));
  console.log(`${mode}: per-round CPU ratio gateway / gateway B: median ${r[1]} (q1 ${r[0]}, q3 ${r[2]}) over ${ROUNDS} rounds`);
}
if (models.has('gateway B')) {
  const r = quartiles(pairedRatios(models.get('gateway').rounds, models.get('gateway B').rounds));
  console.log(`GET /v1/models: per-round CPU ratio gateway / gateway B: median ${r[1]} (q1 ${r[0]}, q3 ${r[2]}) over ${ROUNDS} rounds`);
}
for (const t of gateways) {
  const m = models.get(t.name);
  const n = Math.ceil(CPU_REQUESTS / ROUNDS) * ROUNDS;
  console.log(`GET /v1/models on ${t.name}: ${((m.cpu / n) * 1e6).toFixed(1)} µs CPU/request, latency median ${median(m.lat).toFixed(3)} ms, p90 ${p90(m.lat).toFixed(3)} ms`);
}
if (receiver) console.log(`gateway B traced: ${receiver.spans.length} spans received in ${receiver.requests} OTLP exports`);
for (const c of children) c.kill('SIGTERM');
// A profiled gateway writes its profile while exiting: give it the time to.
if (gatewayNodeArgs.length && gateway.child.exitCode === null) await new Promise((r) => gateway.child.once('exit', r));
process.exit(0);
