#!/usr/bin/env node
// Turn loop: the overhead the gateway adds per tool round, excluding model and tool time.
// The built gateway runs as its own process (with the real billing for its API key). In this
// process: an OpenAI-compatible upstream that answers at once (turn 1: one web_search call;
// turn 2: text) and a NATS responder on search.query.v1 that answers at once. Both ends stamp
// their events with this process's clock, so per request:
//   overhead = (tool request received − upstream turn 1 ended) + (upstream turn 2 received − tool reply sent)
// i.e. everything between the model's answer and the tool, and between the tool and the next
// model call: SSE parsing, tool dispatch and shaping, NATS, request building, loopback hops.
// Peers in the same run: one proxied completion (x-drael-server-tools: 0) end to end; and the bare
// shape of a tool round (bare-loop.mjs: a process doing only the loop's hops, no product code),
// taking turns with the gateway request by request, so `Drael − bare` (paired, per request) is the
// gateway's own code above this machine's floor.
// Loopback only; bounded counts. Usage: node bench/turn-loop/run.mjs [--requests 300] [--warmup 50]
// A/B in one run: GATEWAY_B_DIR=<another build's apps/gateway> starts that build too (its own
// process, billing and key, the same upstream and tool responder) and then takes --rounds rounds
// of --block requests per mode, the two gateways taking turns (order swapped every round): each
// gateway's median over rounds, and the per-round ratio this ÷ B (median), which scheduling noise
// on a shared machine moves far less than the totals of separate runs.
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { healthAnswer, SEARCH_ANSWER, serveSubjects } from '../lib/gateway-stack.mjs';
import { cpuSeconds } from '../lib/proc-cpu.mjs';
import { benchPrefix, NATS_URL } from '../lib/stack-env.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { startGatewayProcess } = await import(resolve(root, 'packages/test-support/dist/index.js'));

const REQUESTS = numberOption('requests', 300);
const WARMUP = numberOption('warmup', 50);
const ROUNDS = numberOption('rounds', 10);
const BLOCK = numberOption('block', 300);
const B_DIR = process.env.GATEWAY_B_DIR;
const prefix = benchPrefix('bench-loop');
// Gateway B has a NATS prefix of its own (its own billing and key), served by the same responder.
const prefixB = benchPrefix('bench-loop-b');

// --- the tool: search.query.v1 answering at once (Nest's NATS packet format) -----------------
let toolReceived = 0;
let toolReplied = 0;
const serveTool = (p) =>
  serveSubjects(
    p,
    { ...healthAnswer('search'), 'search.query.v1': () => SEARCH_ANSWER },
    {
      onRequest: (subject, step) => {
        if (subject !== 'search.query.v1') return;
        if (step === 'received') toolReceived = performance.now();
        else toolReplied = performance.now();
      },
    },
  );
const nc = await serveTool(prefix);
const ncB = B_DIR ? await serveTool(prefixB) : undefined;

// --- the model: answers at once ---------------------------------------------------------------
let turn1Ended = 0;
let turn2Received = 0;
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const toolTurn =
  chunk({ role: 'assistant', content: '' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query":"bench"}' } }] }) +
  chunk({}, 'tool_calls') +
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`;
const textTurn = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Answer.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n';
const upstream = createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const now = performance.now();
    const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    const afterTool = body.messages.at(-1).role === 'tool';
    if (afterTool) turn2Received = now;
    if (!body.stream) {
      const text = JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Answer.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(afterTool ? textTurn : toolTurn, () => {
      if (!afterTool) turn1Ended = performance.now();
    });
  });
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}/v1`;

const gatewayEnv = {
  NATS_URL,
  DRAEL_NATS_PREFIX: prefix,
  DRAEL_BACKEND_SERVICES: 'search',
  LOG_LEVEL: 'warn',
  // GATEWAY_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the gateway (written at its exit)
  ...(process.env.GATEWAY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.GATEWAY_NODE_OPTIONS } : {}),
  DRAEL_MODELS: JSON.stringify({ bench: { base_url: upstreamUrl, model: 'm' } }),
};
const gatewayOptions = { readyTimeoutMs: 90_000, billing: { tool_level: 'l1_http', plan: 'pro' } };
const gateway = await startGatewayProcess(gatewayEnv, gatewayOptions);
// Gateway B: the other build's own test-support starts its own apps/gateway.
const gatewayB = B_DIR
  ? await (await import(resolve(B_DIR, '../../packages/test-support/dist/index.js'))).startGatewayProcess({ ...gatewayEnv, DRAEL_NATS_PREFIX: prefixB }, gatewayOptions)
  : undefined;
// The bare shape: its own process, the same upstream and tool responder (on the gateway's prefix).
const bare = fork(resolve(here, 'bare-loop.mjs'), ['0', upstreamUrl, prefix], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const barePort = (await new Promise((r) => bare.once('message', r))).port;
const headersOf = (g) => ({ 'content-type': 'application/json', authorization: `Bearer ${g.apiKey}` });
const headers = headersOf(gateway);
const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'q' }], stream: true });

/** One catalogue-mode request (one tool round) to `baseUrl`: its end-to-end time and its overhead, from the stamps. */
async function toolRoundRequest(baseUrl, h) {
  const t0 = performance.now();
  const r = await fetch(`${baseUrl}/v1/chat/completions`, { method: 'POST', headers: h, body });
  const text = await r.text();
  if (r.status !== 200 || !text.includes('Answer.')) throw new Error(`${baseUrl}: unexpected answer ${r.status}: ${text.slice(0, 300)}`);
  return { total: performance.now() - t0, overhead: toolReceived - turn1Ended + (turn2Received - toolReplied) };
}
const loopRequest = (g = gateway, h = headers) => toolRoundRequest(g.url, h);
const bareRequest = () => toolRoundRequest(`http://127.0.0.1:${barePort}`, { 'content-type': 'application/json' });
async function proxyRequest(g = gateway, h = headers) {
  const t0 = performance.now();
  const r = await fetch(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { ...h, 'x-drael-server-tools': '0' }, body });
  await r.text();
  return performance.now() - t0;
}

// CPU milliseconds the gateway process has used, every thread (bench/lib/proc-cpu.mjs).
const cpuMs = (g = gateway) => cpuSeconds(g.child.pid) * 1000;

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f = (ms) => `${ms.toFixed(2)} ms`;

try {
  for (let i = 0; i < WARMUP; i++) {
    await loopRequest();
    await bareRequest();
    await proxyRequest();
  }
  const overhead = [];
  const loopTotal = [];
  const proxyTotal = [];
  const bareOverhead = [];
  const aboveBare = [];
  for (let i = 0; i < REQUESTS; i++) {
    // Drael and the bare shape take turns, who goes first alternating: each pair saw the same machine.
    const [r, b] = i % 2 ? [await loopRequest(), await bareRequest()] : await bareRequest().then(async (b1) => [await loopRequest(), b1]);
    overhead.push(r.overhead);
    loopTotal.push(r.total);
    bareOverhead.push(b.overhead);
    aboveBare.push(r.overhead - b.overhead);
    proxyTotal.push(await proxyRequest());
  }
  // Gateway CPU per request, each mode in a block of its own: scheduling delays on a loaded
  // machine inflate wall time but not the CPU the gateway spends.
  let c0 = cpuMs();
  for (let i = 0; i < REQUESTS; i++) await loopRequest();
  const loopCpu = (cpuMs() - c0) / REQUESTS;
  c0 = cpuMs();
  for (let i = 0; i < REQUESTS; i++) await proxyRequest();
  const proxyCpu = (cpuMs() - c0) / REQUESTS;
  c0 = cpuSeconds(bare.pid) * 1000;
  for (let i = 0; i < REQUESTS; i++) await bareRequest();
  const bareCpu = (cpuSeconds(bare.pid) * 1000 - c0) / REQUESTS;
  console.log(
    `turn loop bench: ${REQUESTS} requests (1 tool round each) after ${WARMUP} warm-up; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log(`  overhead per tool round (excl. model and tool time): median ${f(q(overhead, 50))}, p99 ${f(q(overhead, 99))}   (target: median <= 5 ms)`);
  console.log(
    `  bare shape (bare-loop.mjs, the same hops and no product code): overhead median ${f(q(bareOverhead, 50))}; Drael above it, paired per request: median ${f(q(aboveBare, 50))}`,
  );
  console.log(`  catalogue-mode request, 2 model turns + 1 tool call, end to end: median ${f(q(loopTotal, 50))}, p99 ${f(q(loopTotal, 99))}`);
  console.log(`  peer, proxied single completion (x-drael-server-tools: 0), end to end: median ${f(q(proxyTotal, 50))}, p99 ${f(q(proxyTotal, 99))}`);
  console.log(`  ratio catalogue-mode / proxied (medians): ${(q(loopTotal, 50) / q(proxyTotal, 50)).toFixed(2)}x`);
  console.log(
    `  gateway CPU per request: catalogue mode ${f(loopCpu)}, proxied ${f(proxyCpu)}; the tool round (one more model turn + the tool call) costs ${f(loopCpu - proxyCpu)} of CPU; the bare shape's whole request ${f(bareCpu)} of CPU`,
  );
  if (gatewayB) await abRounds();
} finally {
  await gatewayB?.stop();
  await gateway.stop();
  await nc.drain();
  await ncB?.drain();
  bare.kill();
  upstream.closeAllConnections();
  upstream.close();
}

/** GATEWAY_B_DIR: both builds in turns, per round and mode a block of BLOCK requests each. */
async function abRounds() {
  const sides = [
    { name: 'this', g: gateway, h: headers, overhead: [], loopCpu: [], proxyCpu: [], round: [] },
    { name: 'B', g: gatewayB, h: headersOf(gatewayB), overhead: [], loopCpu: [], proxyCpu: [], round: [] },
  ];
  for (const s of sides) for (let i = 0; i < WARMUP; i++) await loopRequest(s.g, s.h), await proxyRequest(s.g, s.h);
  const ratios = { loop: [], round: [], overhead: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      const overhead = [];
      let c0 = cpuMs(s.g);
      for (let i = 0; i < BLOCK; i++) overhead.push((await loopRequest(s.g, s.h)).overhead);
      const loop = (cpuMs(s.g) - c0) / BLOCK;
      c0 = cpuMs(s.g);
      for (let i = 0; i < BLOCK; i++) await proxyRequest(s.g, s.h);
      const proxy = (cpuMs(s.g) - c0) / BLOCK;
      s.overhead.push(q(overhead, 50));
      s.loopCpu.push(loop);
      s.proxyCpu.push(proxy);
      s.round.push(loop - proxy);
    }
    ratios.loop.push(sides[0].loopCpu[r] / sides[1].loopCpu[r]);
    ratios.round.push(sides[0].round[r] / sides[1].round[r]);
    ratios.overhead.push(sides[0].overhead[r] / sides[1].overhead[r]);
  }
  const list = (xs) => xs.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `A/B (GATEWAY_B_DIR=${B_DIR}): ${ROUNDS} rounds of ${BLOCK} requests per mode; load average now ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  for (const s of sides) {
    console.log(
      `  ${s.name.padEnd(4)} overhead median ${f(q(s.overhead, 50))} (rounds: ${list(s.overhead)}); CPU catalogue ${f(q(s.loopCpu, 50))}, proxied ${f(q(s.proxyCpu, 50))}, tool round ${f(q(s.round, 50))} (rounds: ${list(s.round)})`,
    );
  }
  console.log(
    `  this ÷ B per round, median: catalogue-mode CPU ${q(ratios.loop, 50).toFixed(3)} (${list(ratios.loop)}), tool round CPU ${q(ratios.round, 50).toFixed(3)}, overhead ${q(ratios.overhead, 50).toFixed(3)}`,
  );
}
