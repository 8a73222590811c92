/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroySandboxBuckets, freePort } from '../../src/index.js';
import { render, type Manifest } from './manifest-policy.js';
import { localAddresses, podEnv } from './pod-env.js';

// Issue 17, items 2 and 6: the app IMAGES (infra/docker/Dockerfile), built on this machine's
// Docker engine by infra/docker/build-images.sh, run as their pods run them (k8s/overlays/trial
// as rendered by kubectl): the container's uid/gid and fsGroup, a read-only root filesystem with
// only the declared emptyDir volumes writable, all capabilities dropped, no privilege escalation,
// the engine's default seccomp profile, the memory limit, the environment from the rendered
// ConfigMaps and Secrets; the migration Jobs run to completion from the same images, then each
// app answers its health checks. pod-boot.spec.ts does the same for the source tree on every CI
// run; this one needs the images, and building them takes minutes (infra/docker/README.md has
// the figures), so it is opt-in:
//   DRAEL_IMAGE_TESTS=1       builds FROM the offline stand-in base (no registry reachable)
//   DRAEL_IMAGE_TESTS=pinned  builds FROM the pinned base (pulled from the registry)
// Containers use the host's network so that the cluster's addresses can be this machine's NATS,
// Redis, PostgreSQL and SearXNG; each health port is a free one.

const mode = process.env.DRAEL_IMAGE_TESTS;
const repo = resolve(new URL('../../../..', import.meta.url).pathname);
const run = promisify(execFile);
const prefix = `imgboot-${randomBytes(4).toString('hex')}`;
const local = localAddresses(prefix);
/** Names of the containers this run created, removed in afterAll. */
const started: string[] = [];
let stateDir: string | undefined;

/** Linux capability names by bit number (capability.h), for the bounding set in /proc. */
const CAPS = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];

/**
 * `privileged: true` as docker run can give it here: `--privileged` asks for every capability,
 * which the engine cannot grant where this machine itself runs without some (its bounding set);
 * then every capability the machine has, all devices' access, and no seccomp or AppArmor profile.
 */
function privileged(): string[] {
  const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`);
  const missing = CAPS.filter((_, bit) => (bounding & (1n << BigInt(bit))) === 0n);
  if (missing.length === 0) return ['--privileged'];
  return [
    '--cap-add',
    'ALL',
    ...missing.flatMap((c) => ['--cap-drop', c]),
    '--security-opt',
    'seccomp=unconfined',
    '--security-opt',
    'apparmor=unconfined',
    '--device-cgroup-rule',
    'a *:* rwm',
  ];
}

/** `1536Mi` -> `1536m`, `1Gi` -> `1g`: the pod's memory limit as docker takes it. */
const dockerMemory = (q: string) => q.replace(/^(\d+)([MG])i$/, (_, n: string, u: string) => `${n}${u.toLowerCase()}`);

/**
 * `docker run` arguments that give `container` of `owner`'s pod template the conditions its pod
 * has. Environment values go through the docker client's environment (`-e NAME`), never the
 * command line, as Secrets would.
 */
function dockerRunArgs(owner: Manifest, container: any, env: Record<string, string>, name: string, volumes: Record<string, string[]> = {}): string[] {
  const pod = owner.spec.template.spec;
  const podSec = pod.securityContext ?? {};
  const sec = container.securityContext ?? {};
  const uid = sec.runAsUser ?? podSec.runAsUser;
  const gid = sec.runAsGroup ?? podSec.runAsGroup;
  expect(sec.readOnlyRootFilesystem, name).toBe(true);
  const args = ['run', '-d', '--name', name, '--label', 'drael.role=image-boot-test', '--network', 'host', '--read-only', '--user', `${uid}:${gid ?? uid}`];
  if (sec.privileged) args.push(...privileged());
  if (podSec.fsGroup !== undefined) args.push('--group-add', String(podSec.fsGroup));
  if ((sec.capabilities?.drop ?? []).includes('ALL')) args.push('--cap-drop', 'ALL');
  if (sec.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  // seccompProfile RuntimeDefault is the engine's default profile, which docker run applies.
  expect(sec.seccompProfile?.type ?? podSec.seccompProfile?.type, name).toBe('RuntimeDefault');
  const memory = container.resources?.limits?.memory;
  if (memory) args.push('--memory', dockerMemory(memory));
  for (const m of container.volumeMounts ?? []) {
    if (volumes[m.name]) {
      args.push(...volumes[m.name]!);
      continue;
    }
    const vol = pod.volumes.find((v: any) => v.name === m.name);
    expect(vol.emptyDir, `${name}: volume ${m.name} is an emptyDir`).toBeDefined();
    // An emptyDir: empty, writable by the pod's users, executable (docker's tmpfs default is noexec).
    const size = vol.emptyDir.sizeLimit ? `,size=${dockerMemory(vol.emptyDir.sizeLimit)}` : '';
    args.push('--tmpfs', `${m.mountPath}:rw,exec,mode=1777${size}`);
  }
  for (const k of Object.keys(env)) args.push('-e', k);
  // Kubernetes' command replaces the image's ENTRYPOINT, its args the CMD.
  if (container.command) args.push('--entrypoint', container.command[0]);
  args.push(container.image);
  if (container.command) args.push(...container.command.slice(1));
  args.push(...(container.args ?? []));
  return args;
}

async function docker(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await run('docker', args, { env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
  return r.stdout.trim();
}
const state = async (id: string) => JSON.parse(await docker(['inspect', '-f', '{{json .State}}', id])) as { Running: boolean; ExitCode: number };
const logs = async (id: string) => {
  const r = await run('docker', ['logs', '--tail', '60', id], { maxBuffer: 16 << 20 }).catch((e) => e);
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
};

/** Starts container `containerName` of the workload or Job `owner` from its image; returns its id. */
async function start(owner: Manifest, containerName: string, extraEnv: Record<string, string> = {}, volumes: Record<string, string[]> = {}): Promise<string> {
  const container = owner.spec.template.spec.containers.find((c: any) => c.name === containerName);
  const env = { ...podEnv(rendered, owner, container, local), ...extraEnv };
  const name = `${prefix}-${owner.metadata.name}`;
  // Removed by name afterwards: a container the engine created but could not start has no id here.
  started.push(name);
  const id = await docker(dockerRunArgs(owner, container, env, name, volumes), env);
  return id;
}

/** Waits for /healthz, then asks /readyz as the kubelet would (every 2 s) until 200 or `tries` answers. */
async function health(id: string, port: number, tries = 15, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await state(id);
    if (!s.Running) throw new Error(`exited with ${s.ExitCode}:\n${await logs(id)}`);
    const live = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    if (live === 200) {
      for (let i = 1; ; i++) {
        const r = await fetch(`http://127.0.0.1:${port}/readyz`);
        const body = (await r.json()) as any;
        if (r.status === 200 || i >= tries) return { status: r.status, body, logs: () => logs(id) };
        await new Promise((res) => setTimeout(res, 2_000));
      }
    }
    if (Date.now() > deadline) throw new Error(`no /healthz in time:\n${await logs(id)}`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

const rendered = mode ? render(join(repo, 'k8s', 'overlays', 'trial')) : [];
const jobs = mode ? render(join(repo, 'k8s', 'overlays', 'trial', 'migrate')) : [];
const find = (ms: Manifest[], kind: string, name: string) => ms.find((m) => m.kind === kind && m.metadata.name === name)!;
const imageOf = (app: string) => find(rendered, 'Deployment', app).spec.template.spec.containers.find((c: any) => c.name === app).image as string;

describe.skipIf(!mode)('each app image runs as its pod runs it (DRAEL_IMAGE_TESTS)', () => {
  beforeAll(async () => {
    // Idempotent: the engine's layer cache makes an up-to-date build a matter of seconds per image.
    const images = ['gateway', 'sandbox', 'search', 'fetch', 'billing', 'agent-run', 'sandbox-run'];
    const r = await run('bash', [join(repo, 'infra', 'docker', 'build-images.sh'), ...(mode === 'pinned' ? [] : ['--standin']), ...images], {
      cwd: repo,
      maxBuffer: 16 << 20,
    });
    console.log(r.stdout);
  }, 3_600_000);

  afterAll(async () => {
    for (const name of started) await run('docker', ['rm', '-f', name]).catch(() => undefined);
    await destroySandboxBuckets(prefix);
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }, 60_000);

  it('each image runs the Node that provisioning installs (one Node everywhere), as uid 1000, with no .env file, no npm and none of its dev dependencies', async () => {
    const pinned = /^DRAEL_NODE_VERSION=(\S+)$/m.exec(readFileSync(join(repo, 'infra', 'provision.d', '00-toolchain.sh'), 'utf8'))![1];
    for (const app of ['gateway', 'sandbox', 'search', 'fetch', 'billing', 'agent-run']) {
      // pnpm deploy --prod links the app's production dependencies only: none of its devDependencies.
      const dev = Object.keys(JSON.parse(readFileSync(join(repo, 'apps', app, 'package.json'), 'utf8')).devDependencies ?? {});
      expect(dev.length, app).toBeGreaterThan(0);
      const script = [
        'node --version',
        'id -u',
        'find /app -path "*/node_modules" -prune -o \\( -name .env -o -name ".env.*" \\) ! -name .env.example -print | wc -l',
        'command -v npm || echo no-npm',
        `for d in ${dev.join(' ')}; do test -e "/app/node_modules/$d" && echo "$d"; done; echo end`,
      ].join('; ');
      const out = await docker(['run', '--rm', '--read-only', '--entrypoint', 'sh', imageOf(app), '-c', script]);
      expect(out.split('\n'), app).toEqual([`v${pinned}`, '1000', '0', 'no-npm', 'end']);
    }
  }, 120_000);

  it('fetch carries Chromium at CHROMIUM_PATH; sandbox carries iptables, mkfs.ext4 and mount', async () => {
    const chromium = podEnv(
      rendered,
      find(rendered, 'Deployment', 'fetch'),
      find(rendered, 'Deployment', 'fetch').spec.template.spec.containers.find((c: any) => c.name === 'fetch'),
      local,
    ).CHROMIUM_PATH!;
    await docker(['run', '--rm', '--entrypoint', 'test', imageOf('fetch'), '-x', chromium]);
    expect(await docker(['run', '--rm', '--entrypoint', 'sh', imageOf('sandbox'), '-c', 'for t in iptables mkfs.ext4 mount; do command -v $t >/dev/null && echo $t; done'])).toBe(
      'iptables\nmkfs.ext4\nmount',
    );
  }, 60_000);

  it.each(['migrate-billing', 'migrate-agent-run'])(
    'the %s Job runs to completion from its app image',
    async (name) => {
      const id = await start(find(jobs, 'Job', name), 'migrate');
      const code = Number(await docker(['wait', id]));
      expect(code, await logs(id)).toBe(0);
    },
    120_000,
  );

  it.each(['billing', 'search', 'fetch', 'agent-run'])(
    '%s answers /healthz on its health port, and /readyz is 200 with NATS ok',
    async (app) => {
      const port = await freePort();
      const id = await start(find(rendered, 'Deployment', app), app, { HEALTH_PORT: String(port) });
      const r = await health(id, port);
      expect(r.body.service, app).toBe(app);
      expect(r.body.checks.nats, `${app}: ${JSON.stringify(r.body)}`).toBe('ok');
      expect(r.status, `${app}: ${JSON.stringify(r.body)}\n${await r.logs()}`).toBe(200);
    },
    150_000,
  );

  it('sandbox (root, privileged, an engine at the dind socket, its state at the identical path) answers /healthz, and /readyz is 200 with the run image in the engine', async () => {
    const port = await freePort();
    // The pod's dind sidecar is this machine's engine here; the state directory is a fresh one
    // at the same path on the machine and in the container, as the pod shares it with its engine.
    stateDir = mkdtempSync(join(tmpdir(), `${prefix}-state-`));
    const dep = find(rendered, 'Deployment', 'sandbox');
    const id = await start(
      dep,
      'sandbox',
      { HEALTH_PORT: String(port), SANDBOX_STATE_DIR: stateDir, SANDBOX_WARM_POOL: '0' },
      {
        'dind-socket': ['-v', '/var/run/docker.sock:/run/dind/docker.sock'],
        state: ['-v', `${stateDir}:${stateDir}`],
      },
    );
    const r = await health(id, port);
    expect(r.body.service).toBe('sandbox');
    expect(r.status, `${JSON.stringify(r.body)}\n${await r.logs()}`).toBe(200);
  }, 150_000);

  it('gateway answers /healthz, and /readyz is 200 (NATS and key verification by the billing image above)', async () => {
    const [port, metrics] = [await freePort(), await freePort()];
    const id = await start(find(rendered, 'Deployment', 'gateway'), 'gateway', { PORT: String(port), METRICS_PORT: String(metrics) });
    const r = await health(id, port);
    expect(r.body.nats, JSON.stringify(r.body)).toBe(true);
    expect(r.status, `${JSON.stringify(r.body)}\n${await r.logs()}`).toBe(200);
    // The console's static files are in the gateway's image (DRAEL_CONSOLE_DIR).
    expect((await fetch(`http://127.0.0.1:${port}/console/`)).status).toBe(200);
  }, 150_000);
});
