#!/usr/bin/env node
// Where a sandbox run's time goes, step by step, on this machine's engine: each step of one fresh
// container's life timed on its own (dockerode, as the sandbox service drives it), the workspace
// volume's steps (truncate + mkfs.ext4, mount, umount; and a tmpfs mount), a NATS request/reply
// round trip, and a whole run through the service for each kind (session-less, warm session,
// fresh request workspace). Medians over --n repetitions; loopback and the local engine only.
// Needs root (mount), Docker, NATS, the sandbox image and the built sandbox app.
// Usage: node bench/sandbox/breakdown.mjs [--n 15] [--service 0|1] [--only-service 1] [--pause 150]
import { stopOnSignal } from '../lib/ends-with-bench.mjs';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile, open, chmod } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { NatsRpcClient } from '../../packages/nats-rpc/dist/index.js';
import { sandboxCatalog } from '../../packages/contracts/dist/index.js';
import { NATS_URL } from '../lib/stack-env.mjs';
import { startSandboxService } from '../lib/sandbox-service.mjs';
import { numberOption } from '../lib/cli-options.mjs';

const exec = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const Docker = createRequire(`${repo}/apps/sandbox/package.json`)('dockerode');
const N = Math.min(numberOption('n', 15), 100);
// Between the service's runs: long enough, on a slow engine, for the background work one run
// leaves (its container's removal, the next container's create + start) to finish before the next.
const PAUSE_MS = numberOption('pause', 150);
const ONLY_SERVICE = numberOption('only-service', 0) === 1;
const WITH_SERVICE = numberOption('service', 1) === 1;
const IMAGE = process.env.SANDBOX_IMAGE ?? 'drael-sandbox:latest';
const instance = `bench-${randomBytes(3).toString('hex')}`;
const scratch = `/var/lib/drael/sandbox-bench/${instance}`;
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const LABELS = { 'drael.sandbox': '1', 'drael.sandbox.instance': instance };

const steps = new Map();
const note = (name, ms) => (steps.get(name) ?? steps.set(name, []).get(name)).push(ms);
const timed = async (name, fn) => {
  const t = performance.now();
  const r = await fn();
  note(name, performance.now() - t);
  return r;
};
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const hostConfig = (binds, tmpfs) => ({
  NetworkMode: 'none',
  ReadonlyRootfs: true,
  CapDrop: ['ALL'],
  SecurityOpt: ['no-new-privileges:true'],
  Init: true,
  Memory: 512 << 20,
  MemorySwap: 512 << 20,
  PidsLimit: 128,
  NanoCpus: 1e9,
  Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m,nr_inodes=4096,mode=1777', ...tmpfs },
  Binds: binds,
  LogConfig: { Type: 'none', Config: {} },
  IpcMode: 'private',
  ShmSize: 16 << 20,
});

/** One container's life, each step timed: create, attach, start, exit, inspect, remove. */
async function containerLife(kind, programDir, workDir) {
  const binds = [`${programDir}:/sandbox:ro`, ...(workDir ? [`${workDir}:/work:rw`] : [])];
  const tmpfs = workDir ? {} : { '/work': 'rw,nosuid,nodev,size=64m,nr_inodes=8192,mode=0700,uid=65534,gid=65534' };
  const c = await timed(`${kind}: create`, () =>
    docker.createContainer({
      Image: IMAGE,
      Cmd: ['python3', '-u', '/sandbox/main.py'],
      Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      WorkingDir: '/work',
      User: '65534:65534',
      NetworkDisabled: true,
      AttachStdout: true,
      AttachStderr: true,
      Labels: LABELS,
      HostConfig: hostConfig(binds, tmpfs),
    }),
  );
  const stream = await timed(`${kind}: attach`, () => c.attach({ stream: true, stdout: true, stderr: true }));
  const parts = [];
  stream.on('data', (d) => parts.push(d));
  const ended = new Promise((r) => stream.once('end', r));
  const waited = c.wait({ condition: 'next-exit' });
  const t0 = performance.now();
  await timed(`${kind}: start (API returns)`, () => c.start());
  await waited;
  note(`${kind}: start → exit seen`, performance.now() - t0);
  await timed(`${kind}: output stream end after exit`, () => ended);
  await timed(`${kind}: inspect`, () => c.inspect());
  await timed(`${kind}: remove`, () => c.remove({ force: true, v: true }));
  // Docker's multiplexed frames: an 8-byte header (stream, 0, 0, 0, length) before each payload.
  const all = Buffer.concat(parts);
  let out = '';
  for (let at = 0; at + 8 <= all.length; at += 8 + all.readUInt32BE(at + 4)) out += all.subarray(at + 8, at + 8 + all.readUInt32BE(at + 4)).toString();
  if (out.trim() !== '1') throw new Error(`unexpected output ${JSON.stringify(out)}`);
}

async function main() {
  await mkdir(scratch, { recursive: true, mode: 0o711 });
  const programDir = `${scratch}/prog`;
  await mkdir(programDir, { mode: 0o755 });
  await writeFile(`${programDir}/main.py`, 'print(1)\n', { mode: 0o444 });
  const workDir = `${scratch}/work`;
  await mkdir(workDir);
  await chmod(workDir, 0o777);
  for (let i = 0; i < 2; i++) await containerLife('warm-up', programDir, undefined);
  for (let i = 0; i < N; i++) {
    await containerLife('tmpfs /work', programDir, undefined);
    await containerLife('bind /work', programDir, workDir);
    // The workspace volume's own steps (a session's or a request's ext4 image).
    const img = `${scratch}/v${i}.img`;
    const mnt = `${scratch}/v${i}.mnt`;
    await timed('volume: truncate + mkfs.ext4 (256 MiB)', async () => {
      const fh = await open(img, 'wx', 0o600);
      await fh.truncate(256 << 20);
      await fh.close();
      await exec('mkfs.ext4', ['-q', '-F', '-m', '0', '-N', '16384', '-E', 'root_owner=65534:65534', img]);
    });
    await mkdir(mnt);
    await timed('volume: mount (loop)', () => exec('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,nosymfollow,noatime', img, mnt]));
    await timed('volume: umount', () => exec('umount', [mnt]));
    await timed('tmpfs: mount', () => exec('mount', ['-t', 'tmpfs', '-o', 'size=64m,nosuid,nodev,mode=0777', 'tmpfs', mnt]));
    await timed('tmpfs: umount', () => exec('umount', [mnt]));
    await timed('host: spawn /bin/true', () => exec('/bin/true'));
    await rm(img);
    await rm(mnt, { recursive: true });
  }
  const nc = await NatsRpcClient.connect({ servers: NATS_URL, prefix: `bench-${instance}` });
  const raw = nc.connection;
  if (raw) {
    const sub = raw.subscribe('bench.echo');
    void (async () => {
      for await (const m of sub) m.respond(m.data);
    })();
    for (let i = 0; i < N * 4; i++) await timed('NATS: request/reply round trip', () => raw.request('bench.echo', new Uint8Array(200)));
  }
  await nc.close();
}

/** A sandbox service process of the build in `dir`, on its own NATS prefix, label and state dir. */
async function startService(dir, label) {
  const sandbox = await startSandboxService({ dir, instance: `${instance}-${label.toLowerCase()}`, stateDir: `${scratch}/state-${label}`, env: { SANDBOX_IMAGE: IMAGE } });
  return { label, sandbox, client: sandbox.client };
}

// SANDBOX_DIR_B=<another build's apps/sandbox>: the same runs on that build too, interleaved (A/B).
async function service() {
  const services = [await startService(`${repo}/apps/sandbox`, 'A')];
  if (process.env.SANDBOX_DIR_B) services.push(await startService(process.env.SANDBOX_DIR_B, 'B'));
  const tag = (s, name) => (services.length > 1 ? `${s.label} ${name}` : name);
  try {
    const run = async (s, name, extra) => {
      const r = await timed(name, () => s.client.request(sandboxCatalog.run, { tenant: 'bench', runtime: 'python', code: 'print(1)', ...extra }));
      if (r.stdout !== '1\n') throw new Error(`unexpected reply ${JSON.stringify(r)}`);
    };
    const pause = () => new Promise((r) => setTimeout(r, PAUSE_MS));
    for (const s of services) for (let i = 0; i < 3; i++) await run(s, 'warm-up', { session: 'warm' });
    for (let i = 0; i < N; i++) {
      for (const s of services) {
        await run(s, tag(s, 'service: session-less'), {});
        await pause();
        await run(s, tag(s, 'service: warm session'), { session: 'warm' });
        await pause();
        const req = `req-${randomBytes(6).toString('hex')}`;
        await run(s, tag(s, 'service: fresh request workspace'), { session: req, scope: 'request' });
        await pause();
        await run(s, tag(s, 'service: same request, 2nd run'), { session: req, scope: 'request' });
        await s.client.request(sandboxCatalog.workspaceDelete, { tenant: 'bench', session: req, scope: 'request' }).catch(() => undefined);
        await pause();
      }
    }
  } finally {
    for (const s of services) await s.sandbox.stop();
  }
}

const load0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
// Also run when the bench is stopped by a signal (ends-with-bench.mjs).
const cleanUp = stopOnSignal(async () => {
  // The containers of the dockerode steps (the services' own are removed by their stop()).
  const { stdout } = await exec('docker', ['ps', '-aq', '--filter', `label=drael.sandbox.instance=${instance}`]);
  const ids = stdout.split('\n').filter(Boolean);
  if (ids.length) await exec('docker', ['rm', '-f', ...ids]);
  await exec('sh', ['-c', `grep -o ' ${scratch}[^ ]*' /proc/self/mounts | sort -r | xargs -r -n1 umount -l`]).catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});
try {
  if (!ONLY_SERVICE) await main();
  if (WITH_SERVICE) await service();
} finally {
  await cleanUp();
}
console.log(
  `sandbox breakdown: python print(1), ${N} repetitions, ${PAUSE_MS} ms between runs, medians; load average ${load0} at start, ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at end; ${new Date().toISOString()}`,
);
for (const [name, xs] of steps)
  if (name !== 'warm-up' && !name.startsWith('warm-up'))
    console.log(`  ${name.padEnd(48)} ${med(xs).toFixed(1).padStart(7)} ms   (p90 ${[...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)].toFixed(1)})`);
