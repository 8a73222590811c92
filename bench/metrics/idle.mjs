// What prom-client's process metrics cost an idle process: one child process per lag-histogram
// sampling interval (none, 10, 20, 100, 1000 ms), each with collectDefaultMetrics alone and
// nothing else to do, its CPU read after --seconds (default 10). All run at once, so they share
// the machine's state.
// Usage: node bench/metrics/idle.mjs [--seconds 10]
import '../lib/ends-with-bench.mjs';
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberOption } from '../lib/cli-options.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const seconds = numberOption('seconds', 10);

if (process.argv[2] === 'child') {
  const precision = Number(process.argv[3]);
  // prom-client as packages/metrics resolves it (the version Drael ships).
  const { Registry, collectDefaultMetrics } = createRequire(resolve(root, 'packages/metrics/package.json'))('prom-client');
  if (precision > 0) collectDefaultMetrics({ register: new Registry(), eventLoopMonitoringPrecision: precision });
  const keepAlive = setInterval(() => {}, 1 << 30);
  const c0 = process.cpuUsage();
  setTimeout(() => {
    const c = process.cpuUsage(c0);
    process.send({ precision, msPerS: (c.user + c.system) / 1000 / Number(process.argv[4]) });
    clearInterval(keepAlive);
  }, Number(process.argv[4]) * 1000);
} else {
  const load0 = loadavg();
  const results = await Promise.all(
    [0, 10, 20, 100, 1000].map(
      (p) =>
        new Promise((done) => {
          const child = fork(fileURLToPath(import.meta.url), ['child', String(p), String(seconds)]);
          child.once('message', done);
        }),
    ),
  );
  console.log(`bench/metrics/idle (${new Date().toISOString()}, node ${process.version}, load ${load0.map((x) => x.toFixed(2)).join(' ')}; ${seconds} s idle)`);
  for (const r of results) console.log(`  lag histogram every ${r.precision ? `${r.precision} ms` : '(no process metrics)'}: ${r.msPerS.toFixed(2)} ms of CPU a second`);
}
