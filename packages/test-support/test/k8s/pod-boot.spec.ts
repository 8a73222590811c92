/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { destroySandboxBuckets, freePort } from '../../src/index.js';
import { render } from './manifest-policy.js';
import { localAddresses, podEnv } from './pod-env.js';

// Issue 17, item 2: each app is booted the way its pod runs it (k8s/overlays/trial as rendered by
// kubectl): the pod's uid and gid, a read-only root filesystem where only the volumes the pod
// declares are writable (fresh, mode 0777 like an emptyDir), the environment built from the
// rendered ConfigMaps and from the Secrets' documented keys; then it must answer its health
// check. bubblewrap gives the process the read-only root; nothing of the app is changed.
// Addresses that only exist inside a cluster (nats, redis, postgres, searxng) are pointed at
// this machine's, and each health port is a free one, so parallel runs never collide.

const repo = resolve(new URL('../../../..', import.meta.url).pathname);
const ms = render(join(repo, 'k8s', 'overlays', 'trial'));
const prefix = `boot-${randomBytes(4).toString('hex')}`;
const local = localAddresses(prefix);
const deployment = (name: string) => ms.find((m) => m.kind === 'Deployment' && m.metadata.name === name)!;

interface Booted {
  child: ChildProcess;
  output(): string;
  port: number;
  dirs: string[];
}
const booted: Booted[] = [];

/** Starts apps/<app>/dist/main.js under the container's uid/gid, read-only root, declared volumes only. */
async function boot(app: string, options: { dropVolume?: string; env?: Record<string, string> } = {}): Promise<Booted> {
  const dep = deployment(app);
  const pod = dep.spec.template.spec;
  const c = pod.containers.find((x: any) => x.name === app);
  const uid = c.securityContext?.runAsUser ?? pod.securityContext?.runAsUser ?? 0;
  const gid = c.securityContext?.runAsGroup ?? pod.securityContext?.runAsGroup ?? 0;
  expect(c.securityContext.readOnlyRootFilesystem, app).toBe(true);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...podEnv(ms, dep, c, local), ...options.env };
  const port = await freePort();
  if (app === 'gateway') env.PORT = String(port);
  else env.HEALTH_PORT = String(port);
  // --unshare-pid: the app and everything it starts (fetch's Chromium, launched in a process group
  // of its own) live in a PID namespace whose init is bwrap's; --die-with-parent kills that init
  // when bwrap dies, and the kernel then kills the whole namespace. setpriv's change of uid clears
  // a process's parent-death signal, so without the namespace the app would outlive a killed bwrap.
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--proc', '/proc', '--die-with-parent'];
  const dirs: string[] = [];
  for (const m of c.volumeMounts ?? []) {
    if (m.name === options.dropVolume) continue;
    // The mount point, as the kubelet makes it in the container's root (ours is the host's, read-only).
    mkdirSync(m.mountPath, { recursive: true });
    if (m.name === 'dind-socket') {
      // The engine's socket, which the pod's dind sidecar provides: here, this machine's engine.
      args.push('--tmpfs', m.mountPath, '--bind', '/var/run/docker.sock', `${m.mountPath}/docker.sock`);
      continue;
    }
    const vol = pod.volumes.find((v: any) => v.name === m.name);
    expect(vol.emptyDir, `${app}: volume ${m.name} is an emptyDir`).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), `boot-${app}-${m.name}-`));
    chmodSync(dir, 0o777);
    dirs.push(dir);
    args.push('--bind', dir, m.mountPath);
  }
  args.push('--chdir', join(repo, 'apps', app), '--', 'setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', process.execPath, 'dist/main.js');
  const child = spawn('bwrap', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const b = { child, output: () => out, port, dirs };
  booted.push(b);
  return b;
}

/**
 * Waits for /healthz to answer 200, then asks /readyz as the kubelet would (every 2 s here) until
 * it is 200 or `readyTries` answers were not; returns the last.
 */
async function health(b: Booted, app: string, timeoutMs = 90_000, readyTries = 10) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (b.child.exitCode !== null) throw new Error(`${app} exited with ${b.child.exitCode}:\n${b.output()}`);
    const live = await fetch(`http://127.0.0.1:${b.port}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    if (live === 200) {
      for (let i = 1; ; i++) {
        const r = await fetch(`http://127.0.0.1:${b.port}/readyz`);
        const body = (await r.json()) as any;
        if (r.status === 200 || i >= readyTries) return { status: r.status, body };
        await new Promise((res) => setTimeout(res, 2_000));
      }
    }
    if (Date.now() > deadline) throw new Error(`${app} did not answer /healthz in time:\n${b.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Host pids of a process's descendants (its children, theirs, ...), from /proc. */
function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    frontier = [...parentOf].filter(([, ppid]) => frontier.includes(ppid)).map(([child]) => child);
    out.push(...frontier);
  }
  return out;
}

/** Live processes started with this run's NATS prefix in their environment: the apps and whatever they spawned. */
function processesOfThisRun(): string[] {
  const marker = `DRAEL_NATS_PREFIX=${prefix}\0`;
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(marker)) found.push(`${name}: ${readFileSync(`/proc/${name}/cmdline`, 'latin1').replaceAll('\0', ' ')}`);
    } catch {
      // gone meanwhile, or a kernel thread
    }
  }
  return found;
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;
const exitOf = (child: ChildProcess, ms: number) =>
  exited(child)
    ? Promise.resolve(true)
    : Promise.race([new Promise<boolean>((r) => child.once('exit', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

afterAll(async () => {
  // SIGTERM to each app first (its own shutdown closes what it started, e.g. fetch's browser);
  // after a grace, SIGKILL to bwrap, which takes the app's PID namespace and all in it along.
  // Shutdown is not under test here: the drains may wait for the test's keep-alive sockets.
  for (const b of booted) {
    if (exited(b.child) || b.child.pid === undefined) continue;
    for (const pid of descendantsOf(b.child.pid)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('dist/main.js')) process.kill(pid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
    }
  }
  await Promise.all(
    booted.map(async (b) => {
      if (!(await exitOf(b.child, 5_000))) b.child.kill('SIGKILL');
      await exitOf(b.child, 10_000);
    }),
  );
  for (const b of booted) for (const d of b.dirs) rmSync(d, { recursive: true, force: true });
  await destroySandboxBuckets(prefix);
  // Nothing any app started outlives the test (an orphaned Chromium once spun on at 77 % CPU).
  // (The kernel empties a namespace as its init dies, a moment after bwrap's own exit.)
  let left = processesOfThisRun();
  for (let i = 0; i < 40 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 250));
    left = processesOfThisRun();
  }
  expect(left).toEqual([]);
}, 120_000);

describe('each app boots as its pod runs it (uid/gid, read-only root, declared volumes, env from the ConfigMap and Secrets)', () => {
  it.each(['billing', 'search', 'fetch', 'agent-run'])(
    '%s answers /healthz on its health port, and /readyz names its dependencies',
    async (app) => {
      const b = await boot(app);
      const r = await health(b, app);
      expect(r.body.service, app).toBe(app);
      expect(r.body.checks.nats, `${app}: ${JSON.stringify(r.body)}`).toBe('ok');
      expect(r.status, `${app}: ${JSON.stringify(r.body)}\n${b.output()}`).toBe(200);
    },
    120_000,
  );

  it('gateway answers /healthz on its HTTP port, and /readyz reports NATS and the backends', async () => {
    const b = await boot('gateway');
    const r = await health(b, 'gateway');
    expect(r.body.nats).toBe(true);
    expect(Object.keys(r.body.services)).toContain('billing');
  }, 120_000);

  it('sandbox (root, privileged, its own engine at the dind socket) boots with its state volume and names the engine in /readyz', async () => {
    const b = await boot('sandbox', { env: { SANDBOX_WARM_POOL: '0' } });
    const r = await health(b, 'sandbox', 90_000, 1);
    expect(r.body.service).toBe('sandbox');
    // The run image of the manifests is not on this machine's engine: readiness names docker.
    expect(Object.keys(r.body.checks)).toContain('docker');
  }, 120_000);

  it('the sandbox booted WITHOUT its declared state volume stops with a message that says what to mount (not a bare ENOENT)', async () => {
    const b = await boot('sandbox', { dropVolume: 'state', env: { SANDBOX_WARM_POOL: '0' } });
    const code = await new Promise<number | null>((r) => (b.child.exitCode !== null ? r(b.child.exitCode) : b.child.once('exit', r)));
    expect(code).not.toBe(0);
    expect(b.output()).toMatch(/SANDBOX_STATE_DIR \/var\/lib\/drael\/sandbox is not writable .*mount a writable volume there/);
  }, 120_000);
});
