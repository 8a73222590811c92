#!/usr/bin/env node
// Responses API: overhead the gateway adds per hosted-tool round. The built gateway (its own
// process) serves POST /v1/responses against a scripted upstream that answers at once; a request
// with R tool rounds makes R+1 upstream calls. Overhead per round =
//   (median latency with R rounds − median latency with 0 rounds) / R
// which still contains one extra loopback upstream call per round (an upper bound on what the
// gateway itself adds). Measured for `datetime` (in-process tool: no tool time at all) and for
// `web_search` through NATS to the real search service (warm Redis cache: mostly transport).
// Loopback only; bounded counts. Usage: node bench/responses/run.mjs [--requests 200] [--rounds 5] [--warmup 40]
import '../lib/ends-with-bench.mjs';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSearchStack } from '../lib/search-stack.mjs';
import { benchPrefix } from '../lib/stack-env.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { startScriptedUpstream } = await import(resolve(root, 'packages/test-support/dist/index.js'));

const REQUESTS = numberOption('requests', 200);
const ROUNDS = numberOption('rounds', 5);
const WARMUP = numberOption('warmup', 40);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = benchPrefix('bench-resp');

const upstream = await startScriptedUpstream({ turns: [] });
// The search service with its own default cache lifetime and log level (a warm cache all run long).
const stack = await startSearchStack({
  prefix,
  redisUrl: REDIS_URL,
  searchEnv: { SEARCH_CACHE_TTL_S: '600', LOG_LEVEL: 'info' },
  gatewayEnv: {
    REDIS_URL,
    RESPONSES_KEY_PREFIX: `bench:${prefix}:responses:`,
    LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'warn',
    DRAEL_MODELS: JSON.stringify({ bench: { base_url: upstream.baseUrl, model: 'bench' } }),
  },
});
const { gateway } = stack;
// Every /v1 route needs a key: the test-support gateway comes with one from the real billing service.
const headers = { 'content-type': 'application/json', ...(gateway.authHeaders ?? {}) };

const toolTurn = (tool) => ({
  type: 'tool_calls',
  calls: [{ id: 'c', name: tool, arguments: tool === 'web_search' ? '{"query":"drael gateway architecture"}' : '{}' }],
});

async function once(tool, rounds) {
  upstream.setTurns([...Array.from({ length: rounds }, () => toolTurn(tool)), { type: 'text', content: 'done' }]);
  const body = JSON.stringify({ model: 'bench', input: 'go', store: false, tools: [{ type: tool }] });
  const t0 = process.hrtime.bigint();
  const r = await fetch(`${gateway.url}/v1/responses`, { method: 'POST', headers, body });
  const json = await r.json();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 200 || json.status !== 'completed' || json.output.length !== rounds + 1) {
    throw new Error(`unexpected answer ${r.status}: ${JSON.stringify(json).slice(0, 300)}`);
  }
  return ms;
}

/** One upstream call straight from this process: the loopback model cost every round also pays. */
async function direct() {
  upstream.setTurns([{ type: 'text', content: 'done' }]);
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'go' }], stream: true, stream_options: { include_usage: true } });
  const t0 = process.hrtime.bigint();
  const r = await fetch(`${upstream.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await r.text();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

// [user, system] CPU seconds of the gateway process (Linux USER_HZ = 100). System time is mostly
// the socket syscalls, where loopback TCP does the receiving side's work too.
function cpu(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return [Number(fields[11]) / 100, Number(fields[12]) / 100];
}
const cpuSince = (pid, start) => cpu(pid).map((v, i) => v - start[i]);

/** The peer: the same single upstream call made by the gateway's plain chat proxy. */
async function proxied() {
  upstream.setTurns([{ type: 'text', content: 'done' }]);
  const body = JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'go' }], stream: false });
  const r = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { ...headers, 'x-drael-server-tools': '0' }, body });
  if (r.status !== 200) throw new Error(`chat proxy answered ${r.status}: ${await r.text()}`);
  await r.json();
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

try {
  console.log(`responses bench: ${REQUESTS} requests per kind (after ${WARMUP} warm-up), ${ROUNDS} rounds, concurrency 1, load ${loadavg()[0].toFixed(1)}`);
  const pid = gateway.child.pid;
  const summary = {};
  for (const tool of ['datetime', 'web_search']) {
    for (let i = 0; i < WARMUP; i++) {
      await once(tool, 0);
      await once(tool, ROUNDS);
    }
    // Interleaved, so background load hits every kind alike.
    const base = [];
    const rounds = [];
    const upstreamOnly = [];
    const cpuBase = [0, 0];
    const cpuRounds = [0, 0];
    const cpuProxy = [0, 0];
    const add = (acc, d) => d.forEach((v, i) => (acc[i] += v));
    for (let i = 0; i < REQUESTS; i++) {
      let c = cpu(pid);
      base.push(await once(tool, 0));
      add(cpuBase, cpuSince(pid, c));
      c = cpu(pid);
      rounds.push(await once(tool, ROUNDS));
      add(cpuRounds, cpuSince(pid, c));
      c = cpu(pid);
      await proxied();
      add(cpuProxy, cpuSince(pid, c));
      upstreamOnly.push(await direct());
    }
    const perRound = (quantile(rounds, 0.5) - quantile(base, 0.5)) / ROUNDS;
    const perRoundNet = perRound - quantile(upstreamOnly, 0.5);
    const ms = (acc, n) => acc.map((v) => (v / n) * 1000);
    const [userRound, sysRound] = ms(
      cpuRounds.map((v, i) => v - cpuBase[i]),
      REQUESTS * ROUNDS,
    );
    const [userProxy, sysProxy] = ms(cpuProxy, REQUESTS);
    summary[tool] = { perRoundNet, cpuRound: userRound + sysRound, userRound, cpuProxy: userProxy + sysProxy };
    console.log(
      `${tool.padEnd(10)} 0 rounds: median ${quantile(base, 0.5).toFixed(2)} ms (p90 ${quantile(base, 0.9).toFixed(2)}) | ` +
        `${ROUNDS} rounds: median ${quantile(rounds, 0.5).toFixed(2)} ms (p90 ${quantile(rounds, 0.9).toFixed(2)}) | ` +
        `direct upstream call: median ${quantile(upstreamOnly, 0.5).toFixed(2)} ms`,
    );
    console.log(
      `${tool.padEnd(10)} per round: ${perRound.toFixed(2)} ms wall, ${perRoundNet.toFixed(2)} ms wall without the upstream call; ` +
        `gateway CPU ${(userRound + sysRound).toFixed(2)} ms (user ${userRound.toFixed(2)}, sys ${sysRound.toFixed(2)}); ` +
        `peer, one proxied chat completion: CPU ${(userProxy + sysProxy).toFixed(2)} ms (user ${userProxy.toFixed(2)}, sys ${sysProxy.toFixed(2)})`,
    );
  }
  const d = summary.datetime;
  const w = summary.web_search;
  console.log(
    `RESULT overhead per hosted-tool round, model time excluded (target <= 5 ms median): ` +
      `datetime ${d.perRoundNet.toFixed(2)} ms wall / ${d.cpuRound.toFixed(2)} ms gateway CPU; ` +
      `web_search ${w.perRoundNet.toFixed(2)} ms wall (incl. the search service) / ${w.cpuRound.toFixed(2)} ms gateway CPU; load ${loadavg()[0].toFixed(1)}`,
  );
  console.log(
    `RATIO gateway CPU of a hosted-tool round / of one proxied chat completion: datetime ${(d.cpuRound / d.cpuProxy).toFixed(2)}x, web_search ${(w.cpuRound / w.cpuProxy).toFixed(2)}x`,
  );
} finally {
  await stack.stop();
  await upstream.close();
}
