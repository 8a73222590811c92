// What the gateway's garbage collector does per round of load: the gateway runs with --trace-gc,
// and each round's scavenges are read from its output. A request's objects should die young: the
// heap after each scavenge stays flat. Objects kept alive through scavenges (promoted garbage)
// show as MB promoted per 1,000 requests and as long scavenges; that is how the ~13,000-request
// warm-up of the 20-token whole-answer row was found (docs/decisions/0002-gateway-hot-path.md,
// follow-up 10). One gateway, one load generator (autocannon, its own process), one upstream.
// Usage: node bench/gateway-passthrough/promotion.mjs [--mode catalogue|proxy] [--tokens 20]
//        [--stream] [--amount 2000] [--rounds 10] [--connections 10]
// GATEWAY_DIR: another build's apps/gateway; GATEWAY_NODE_ARGS: more node flags (e.g.
// --turbo-filter=<function> to see what optimising one function changes, --max-opt=2 for no TurboFan).
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startGatewayStack } from '../lib/gateway-stack.mjs';
import { startLoadGenerator } from '../lib/load-client.mjs';
import { cpuSeconds, loadAverage } from '../lib/proc-cpu.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const MODE = option('mode', 'catalogue');
if (MODE !== 'catalogue' && MODE !== 'proxy') throw new Error('--mode catalogue|proxy');
const TOKENS = numberOption('tokens', 20);
const STREAM = process.argv.includes('--stream');
const AMOUNT = numberOption('amount', 2000);
const ROUNDS = numberOption('rounds', 10);
const CONNECTIONS = numberOption('connections', 10);

const upstream = fork(resolve(here, '../lib/token-upstream.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const { port } = await new Promise((r) => upstream.once('message', r));
const model = `t${TOKENS}`;
const gateway = await startGatewayStack({
  models: { [model]: `http://127.0.0.1:${port}/v1` },
  gatewayDir: process.env.GATEWAY_DIR,
  nodeArgs: ['--trace-gc', ...(process.env.GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean)],
  stdout: 'pipe',
});

// "[pid:isolate]  1234 ms: Scavenge 96.1 (189.9) -> 59.2 (189.9) MB, pooled: 66 MB, 8.60 / 0.01 ms ..."
const GC_LINE = /: (Scavenge|Mark-Compact|Minor Mark-Sweep)[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \//;
let round = { scavenges: 0, promotedMb: 0, longestMs: 0, majors: 0 };
let lastAfter;
createInterface({ input: gateway.child.stdout }).on('line', (line) => {
  const m = GC_LINE.exec(line);
  if (!m) return;
  const [, kind, , after, ms] = m;
  if (kind === 'Mark-Compact') round.majors++;
  else {
    round.scavenges++;
    // What this scavenge left behind that the last collection had not: kept through it.
    if (lastAfter !== undefined) round.promotedMb += Math.max(0, Number(after) - lastAfter);
    round.longestMs = Math.max(round.longestMs, Number(ms));
  }
  lastAfter = Number(after);
});

const gen = await startLoadGenerator();
const headers = { ...gateway.headers, ...(MODE === 'proxy' ? { 'x-drael-server-tools': '0' } : {}) };
const body = JSON.stringify({
  model,
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Count, one token at a time.' },
  ],
  stream: STREAM,
  ...(STREAM ? { stream_options: { include_usage: true } } : {}),
  max_tokens: 512,
  temperature: 0,
});
console.log(
  `gateway-passthrough/promotion: ${MODE} mode, ${TOKENS} tokens, ${STREAM ? 'streaming' : 'non-streaming'}, ${ROUNDS} rounds of ${AMOUNT} requests, ${CONNECTIONS} connections; node ${process.version}; ${new Date().toISOString()}; load average ${loadAverage()}`,
);
console.log('round  requests so far  gateway CPU µs/req  scavenges  MB promoted per 1,000 req  longest scavenge ms  mark-compacts');
for (let k = 1; k <= ROUNDS; k++) {
  round = { scavenges: 0, promotedMb: 0, longestMs: 0, majors: 0 };
  const cpu0 = cpuSeconds(gateway.pid);
  await gen.run({ url: `${gateway.url}/v1/chat/completions`, headers, body, amount: AMOUNT, connections: CONNECTIONS });
  // The round's last trace lines come through the pipe a moment after its last answer.
  await new Promise((r) => setTimeout(r, 200));
  const us = ((cpuSeconds(gateway.pid) - cpu0) / AMOUNT) * 1e6;
  console.log(
    [k, k * AMOUNT, us.toFixed(0), round.scavenges, ((round.promotedMb * 1000) / AMOUNT).toFixed(2), round.longestMs.toFixed(1), round.majors]
      .map((v, i) => String(v).padStart([5, 15, 18, 9, 25, 19, 13][i]))
      .join('  '),
  );
}
console.log(`load average at end ${loadAverage()}`);
gen.close();
await gateway.stop();
process.exit(0);
