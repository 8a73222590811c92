// bench/sandbox: latency of a `print(1)` python run through NATS → sandbox service → Docker,
// beside a raw `docker run --rm --network none` of the same image in the same run (interleaved),
// then runs per second at concurrency 4 for both. Loopback and the local Docker engine only.
// Needs: NATS, a running Docker engine, the sandbox image (infra/sandbox-image/build.sh), built
// apps (pnpm build). Starts its own sandbox service process (own NATS prefix and label).
// Usage: node bench/sandbox/run.mjs [--n 30] [--burst 40]
import '../lib/ends-with-bench.mjs';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { sandboxCatalog } from '../../packages/contracts/dist/index.js';
import { startSandboxService } from '../lib/sandbox-service.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const exec = promisify(execFile);
// Bounded in count: at most 200 sequential pairs and 200 burst runs.
const N = Math.min(numberOption('n', 30), 200);
const BURST = Math.min(numberOption('burst', 40), 200);
const CONCURRENCY = 4;
const WARMUP = 3;
const IMAGE = process.env.SANDBOX_IMAGE ?? 'drael-sandbox:latest';
const instance = `bench-${randomBytes(3).toString('hex')}`;

const sandbox = await startSandboxService({ instance, env: { SANDBOX_IMAGE: IMAGE } });
const { client } = sandbox;
try {
  const viaService = async () => {
    const t = performance.now();
    const r = await client.request(sandboxCatalog.run, { tenant: 'bench', runtime: 'python', code: 'print(1)' });
    if (r.stdout !== '1\n') throw new Error(`unexpected reply ${JSON.stringify(r)}`);
    return performance.now() - t;
  };
  const rawDocker = async () => {
    const t = performance.now();
    const { stdout } = await exec('docker', ['run', '--rm', '--network', 'none', IMAGE, 'python3', '-c', 'print(1)']);
    if (stdout !== '1\n') throw new Error(`unexpected docker output ${stdout}`);
    return performance.now() - t;
  };

  for (let i = 0; i < WARMUP; i++) {
    await viaService();
    await rawDocker();
  }
  const service = [];
  const raw = [];
  for (let i = 0; i < N; i++) {
    // Interleaved so both see the same machine load.
    service.push(await viaService());
    // Let the warm pool refill as it would between real requests.
    await new Promise((r) => setTimeout(r, 150));
    raw.push(await rawDocker());
  }

  const burst = async (fn) => {
    let next = 0;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < BURST) await fn();
      }),
    );
    return BURST / ((performance.now() - t) / 1000);
  };
  const serviceRps = await burst(viaService);
  const rawRps = await burst(rawDocker);

  const q = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  };
  const ms = (x) => `${x.toFixed(0)} ms`;
  const load = (await exec('cat', ['/proc/loadavg'])).stdout.split(' ').slice(0, 3).join(' ');
  console.log(`sandbox bench: python print(1), ${N} interleaved pairs, load average ${load}`);
  console.log(`  via NATS + sandbox service   p50 ${ms(q(service, 50))}  p95 ${ms(q(service, 95))}`);
  console.log(`  raw docker run --rm          p50 ${ms(q(raw, 50))}  p95 ${ms(q(raw, 95))}`);
  console.log(`  ratio service/raw            p50 ${(q(service, 50) / q(raw, 50)).toFixed(2)}  p95 ${(q(service, 95) / q(raw, 95)).toFixed(2)}`);
  console.log(
    `  runs/s at concurrency ${CONCURRENCY} (${BURST} runs): service ${serviceRps.toFixed(2)}  raw docker ${rawRps.toFixed(2)}  ratio ${(serviceRps / rawRps).toFixed(2)}`,
  );
} finally {
  await sandbox.stop();
}
