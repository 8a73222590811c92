#!/usr/bin/env node
// A fault check, not a speed bench: the gateway under load across rate-limit window ends, every
// answer's status counted. RATE_LIMIT_LEASE_FRACTION=0 makes each request take its own lease from
// Redis, so the requests that arrive in a minute window's last millisecond are counted there too:
// until 2026-12-05 one of them a minute had no decision and was answered 500 (README, "Thirty-fourth
// session"). Proxy mode and catalogue mode in turn, `--seconds` each (default 65: together they
// cross at least two minute ends). Exits 1 when any answer was not a 200.
// Usage: node bench/gateway-passthrough/rate-window-edges.mjs [--seconds 65] [--connections 10]
//        GATEWAY_DIR=<another build's apps/gateway> to run that build instead of this checkout's.
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoadGenerator } from '../lib/load-client.mjs';
import { startGatewayStack } from '../lib/gateway-stack.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const SECONDS = numberOption('seconds', 65);
const CONNECTIONS = numberOption('connections', 10);

const upstream = fork(resolve(here, '../lib/token-upstream.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const { port } = await new Promise((r) => upstream.once('message', r));
const gateway = await startGatewayStack({
  models: { t20: `http://127.0.0.1:${port}/v1` },
  gatewayDir: process.env.GATEWAY_DIR,
  env: { RATE_LIMIT_LEASE_FRACTION: '0' },
});
const gen = await startLoadGenerator();
const body = JSON.stringify({ model: 't20', messages: [{ role: 'user', content: 'Count.' }], max_tokens: 100 });

let failed = false;
for (const [mode, serverTools] of [
  ['proxy mode', '0'],
  ['catalogue mode', '1'],
]) {
  const started = new Date().toISOString();
  // The load generator rejects a load with any failure, naming its statuses.
  const outcome = await gen
    .run({ url: `${gateway.url}/v1/chat/completions`, headers: { ...gateway.headers, 'x-drael-server-tools': serverTools }, body, duration: SECONDS, connections: CONNECTIONS })
    .then((r) => `${r.requests} answers, statuses ${JSON.stringify(r.statuses)}`)
    .catch((err) => {
      failed = true;
      return `FAILED: ${err.message}`;
    });
  console.log(`${mode}, ${SECONDS} s from ${started}: ${outcome}`);
}
gen.close();
await gateway.stop();
upstream.kill('SIGTERM');
process.exit(failed ? 1 : 0);
