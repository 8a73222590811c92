#!/usr/bin/env node
// How many fresh containers a second this machine's engine gives: create, start and remove,
// `--parallel` at a time, with the settings a sandbox run's container has (no network, read-only
// root, every capability dropped, memory, pids, tmpfs /tmp and /work). One fresh container per run
// is the sandbox's rule, so this is the ceiling on runs a second for one engine, whatever the pool.
// Usage: node bench/sandbox/engine-throughput.mjs [--n 8] [--parallel 1] [--image drael-sandbox:latest]
// Needs: the Docker engine at /var/run/docker.sock (DOCKER_SOCKET) and the sandbox image.
import http from 'node:http';
import { loadavg } from 'node:os';
import { numberOption, option } from '../lib/cli-options.mjs';

const N = numberOption('n', 8);
const PARALLEL = numberOption('parallel', 1);
const IMAGE = option('image', process.env.SANDBOX_IMAGE ?? 'drael-sandbox:latest');
const socketPath = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';

function engine(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => (res.statusCode < 300 ? resolve(text ? JSON.parse(text) : undefined) : reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const container = {
  Image: IMAGE,
  Cmd: ['sleep', '100'],
  User: '65534:65534',
  NetworkDisabled: true,
  Labels: { 'drael.bench': 'engine-throughput' },
  HostConfig: {
    NetworkMode: 'none',
    LogConfig: { Type: 'none', Config: {} },
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges:true'],
    Memory: 256 << 20,
    MemorySwap: 256 << 20,
    PidsLimit: 64,
    NanoCpus: 1e9,
    Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m', '/work': 'rw,nosuid,nodev,size=64m' },
    ShmSize: 16 << 20,
    IpcMode: 'private',
  },
};

const phases = { create: [], start: [], remove: [] };
async function one() {
  let t = performance.now();
  const { Id } = await engine('POST', '/containers/create', container);
  phases.create.push(performance.now() - t);
  t = performance.now();
  await engine('POST', `/containers/${Id}/start`);
  phases.start.push(performance.now() - t);
  t = performance.now();
  await engine('DELETE', `/containers/${Id}?force=true`);
  phases.remove.push(performance.now() - t);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load0 = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
await one(); // the image's first use is not what is measured
for (const k of Object.keys(phases)) phases[k].length = 0;
const began = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: PARALLEL }, async () => {
    while (next < N) {
      next++;
      await one();
    }
  }),
);
const wall = performance.now() - began;
console.log(`engine throughput: ${N} containers, ${PARALLEL} at a time; load average ${load0} at start; ${new Date().toISOString()}`);
console.log(
  `  ${(N / (wall / 1000)).toFixed(2)} containers/s (${(wall / N).toFixed(0)} ms of wall each); medians: create ${median(phases.create).toFixed(0)} ms, start ${median(phases.start).toFixed(0)} ms, remove ${median(phases.remove).toFixed(0)} ms`,
);
