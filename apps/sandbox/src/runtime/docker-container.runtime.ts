import { writeFileSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import { MAX_STREAM_BYTES } from '@drael/contracts';
import type { Logger } from '@drael/logger';
import { RpcError } from '@drael/nats-rpc';
import type { SandboxConfig } from '../config/config.schema.js';
import { RUNTIMES, type Runtime } from '../run/runtimes.js';
import { runHostCommand } from '../workspace/host-command.js';
import { mountsUnder } from '../workspace/session-volume.js';
import type { ContainerRunResult, ContainerRunSpec, ContainerRuntime, FreshFor } from './container-runtime.js';
import { demuxDockerStream } from './docker-stream-demux.js';
import { OutputCapture } from './output-capture.js';
import { recordContainerStart, watchSandbox } from '../sandbox.metrics.js';
import { SandboxError } from '../sandbox-error.js';
import { afterNextAnswer, untilAnswered } from '../after-answer.js';

const LABEL = 'drael.sandbox';
const LABEL_INSTANCE = 'drael.sandbox.instance';
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// How long the output stream may lag behind the exit before it is cut off (a grandchild that
// escaped the pid namespace cannot exist, so this only bounds a slow engine).
const STREAM_DRAIN_MS = 2_000;
// Captures are set up before the request is known (warm containers): the most a run may ask for.
const MAX_CAPTURE_BYTES = MAX_STREAM_BYTES;
// Every container is started ahead of its run and waits for one line on its stdin: then it runs
// the program (already written to /sandbox), with /dev/null as its stdin. A container whose stdin
// closes without that line exits without running anything. The program path comes as arguments,
// never the program. Once the program has ended, the launcher (pid 1) kills whatever it left
// running (`kill -1`: every process but pid 1) and writes
// `<mark> <status>` on stdout and on stderr, the mark a random one sent in the line (the program's
// stdin is /dev/null; it never sees it): once both have come through the attach stream, all the
// program's output has, and the run's answer need not wait for the engine to see the container's
// exit (issue 20: on a busy 2-core machine that took 80-200 ms after the program had ended).
// The line also carries the run's time limit, which the launcher enforces itself, a few seconds
// after the service's own timer would: a watchdog (`sleep`, then `kill -9 -1`, which spares pid 1)
// beside the program, which stays in the foreground (its signals as usual). The service's timer
// stops a run while the service lives; the launcher's still does if the service dies mid-run (a
// crash, an OOM kill), where before the program went on using its CPU and memory until that
// replica came back to clean up. A program may kill the watchdog (same uid) like anything else of
// its own, which only leaves it to the service's timer, as before.
const LAUNCHER =
  'read -r _ mark limit || exit 0; (sleep "$limit"; kill -9 -1) 2>/dev/null & "$@" </dev/null; s=$?; kill -9 -1 2>/dev/null; printf "%s %s\\n" "$mark" "$s"; printf "%s %s\\n" "$mark" "$s" >&2; exit $s';
// How long after the run's own timeout the launcher kills the program (the service's timer goes first).
const LAUNCHER_GRACE_S = 5;
// A prepared container kept for a workspace's next run, at most this many (each holds a few MiB).
const MAX_PREPARED_FOR_DIRS = 16;

/**
 * A created, attached, started container waiting for the line that runs its program: the run pays
 * neither create nor start (issue 20: start was most of a run's latency).
 */
interface Prepared {
  container: Docker.Container;
  programDir: string;
  stream: Duplex;
  streamEnded: Promise<void>;
  stdout: OutputCapture;
  stderr: OutputCapture;
  waited: Promise<{ StatusCode: number }>;
  /** The container ended before its run began (engine restart, stdin closed): not usable. */
  exited: boolean;
  /** A fresh request workspace's tmpfs, mounted on the host at this dir and bound at /work; owned here until taken. */
  slotDir?: string;
  /**
   * A fresh request workspace's second container, on the same tmpfs, prepared after the answer
   * that follows this one's preparation (prepareFresh): its request's next run finds it started
   * (a second run that came before a container prepared after the first was ready waited for the
   * rest of its start).
   */
  spare?: Pending;
}

/** A container being prepared for a workspace's next run; `cancel()` drops it if not begun yet. */
interface Pending {
  promise: Promise<Prepared | undefined>;
  cancel(): void;
}

/** A container already prepared (nothing left to cancel). */
function ready(p: Prepared): Pending {
  return { promise: Promise.resolve(p), cancel: () => undefined };
}

/** A preparation that begins once `gate` opens (the answer of the call that asked for it has left), unless cancelled first. */
function gated(gate: Promise<void>, begin: () => Promise<Prepared | undefined>): Pending {
  let cancel!: () => void;
  const cancelled = new Promise<'cancelled'>((resolve) => (cancel = () => resolve('cancelled')));
  const promise = Promise.race([gate, cancelled]).then((why) => (why === 'cancelled' ? undefined : begin()));
  return { promise, cancel };
}

const FRESH_FOR: readonly FreshFor[] = ['run', 'request'];

/**
 * dockerode lives here and nowhere else. One fresh container per run: created, attached and
 * started ahead of its run where it can be (the run then only sends the line that begins it),
 * killed by a host-side timer, inspected when it failed, removed after the reply.
 */
export class DockerContainerRuntime implements ContainerRuntime {
  private readonly docker: Docker;
  private readonly runsDir: string;
  // The pool of fresh workspaces: network-less containers prepared ahead of demand (started,
  // waiting for their run; never reused), each on an empty workspace of its own, keyed by who it
  // is for (a run's own tmpfs, or a request's, on the host) and runtime.
  private readonly pool = new Map<`${FreshFor}:${Runtime}`, Promise<Prepared | undefined>[]>();
  // Containers prepared for the next runs in a workspace (its host dir bound at /work), keyed by
  // that dir, then runtime, in the order runs take them. Disposed before the workspace is
  // unmounted (releaseDir).
  private readonly forDirs = new Map<string, Map<Runtime, Pending[]>>();
  private readonly slotsDir: string;
  private closed = false;
  // Removals of finished session-less containers, done after the reply (awaited on close).
  private readonly cleanups = new Set<Promise<void>>();

  constructor(
    private readonly config: SandboxConfig,
    private readonly logger: Logger,
  ) {
    this.docker = new Docker({ socketPath: config.DOCKER_SOCKET });
    this.runsDir = join(config.SANDBOX_STATE_DIR, 'runs', config.SANDBOX_INSTANCE);
    watchSandbox({ warm: () => [...this.pool.values()].reduce((n, list) => n + list.length, 0) });
    this.slotsDir = join(config.SANDBOX_STATE_DIR, 'slots', config.SANDBOX_INSTANCE);
  }

  async hasImage(): Promise<boolean> {
    try {
      await this.docker.getImage(this.config.SANDBOX_IMAGE).inspect();
      return true;
    } catch {
      return false;
    }
  }

  async ping(): Promise<void> {
    await this.docker.ping();
    if (!(await this.hasImage())) throw new Error(`run image ${this.config.SANDBOX_IMAGE} missing from the engine`);
  }

  async removeLeftovers(): Promise<number> {
    // Program files of runs that died with the previous process (their containers go next).
    await rm(this.runsDir, { recursive: true, force: true });
    await mkdir(this.runsDir, { recursive: true, mode: 0o711 });
    const leftovers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL}=1`, `${LABEL_INSTANCE}=${this.config.SANDBOX_INSTANCE}`] },
    });
    await Promise.all(
      leftovers.map((c) =>
        this.docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => undefined),
      ),
    );
    // Fresh workspaces' tmpfs slots never taken (their containers are gone now).
    await mkdir(this.slotsDir, { recursive: true, mode: 0o700 });
    for (const mountPoint of await mountsUnder(this.slotsDir)) await unmountSlot(mountPoint);
    await rm(this.slotsDir, { recursive: true, force: true });
    await mkdir(this.slotsDir, { recursive: true, mode: 0o700 });
    return leftovers.length;
  }

  async ensureEgressNetwork(): Promise<void> {
    const name = this.config.SANDBOX_EGRESS_NETWORK;
    const found = await this.docker.listNetworks({ filters: { name: [name] } });
    if (found.some((n) => n.Name === name)) return;
    await this.docker.createNetwork({
      Name: name,
      Driver: 'bridge',
      CheckDuplicate: true,
      EnableIPv6: false,
      Internal: false,
      IPAM: { Driver: 'default', Config: [{ Subnet: this.config.SANDBOX_EGRESS_SUBNET }] },
      Labels: { [LABEL]: '1' },
      Options: {
        // A fixed bridge name is what the firewall rules match on.
        'com.docker.network.bridge.name': this.config.SANDBOX_EGRESS_BRIDGE,
        // No traffic between two sandboxes on this network.
        'com.docker.network.bridge.enable_icc': 'false',
        'com.docker.network.bridge.enable_ip_masquerade': 'true',
      },
    });
  }

  async run(spec: ContainerRunSpec, signal?: AbortSignal): Promise<ContainerRunResult> {
    const warm = spec.workspace.kind === 'own' ? await this.takeOwn(spec) : await this.takeForDir(spec);
    if (warm) {
      try {
        return await this.runPrepared(warm, spec, signal);
      } catch (err) {
        // A warm container can vanish under us (the engine restarted): run in a fresh one.
        if (!(err instanceof StartFailed)) throw engineError(err);
        this.logger.warn({ err: err.cause }, 'warm container would not start; using a fresh one');
      }
    }
    let prepared: Prepared;
    try {
      prepared = await this.prepare(spec.runtime, spec);
    } catch (err) {
      throw engineError(err);
    }
    try {
      return await this.runPrepared(prepared, spec, signal);
    } catch (err) {
      throw engineError(err instanceof StartFailed ? err.cause : err);
    }
  }

  private async runPrepared(prepared: Prepared, spec: ContainerRunSpec, signal?: AbortSignal): Promise<ContainerRunResult> {
    let deferred = false;
    try {
      // Synchronous: at most 256 KiB (MAX_CODE_BYTES) into a local directory, microseconds, where
      // the async form's open, write and close were three thread-pool round trips (~0.5 ms) before
      // the program could start (issue 20).
      writeFileSync(join(prepared.programDir, RUNTIMES[spec.runtime].file), spec.code, { mode: 0o444 });
      const result = await this.execute(prepared, spec, signal);
      // An ended container holds no mount (its mount namespace went with its processes), not
      // even its workspace's: removed after the reply, whatever its workspace.
      deferred = true;
      this.defer(untilAnswered().then(() => this.dispose(prepared)));
      return result;
    } catch (err) {
      this.logger.warn({ err }, 'run failed in the engine');
      throw err;
    } finally {
      if (!deferred) await this.dispose(prepared);
      this.refillAfterRun();
    }
  }

  private defer(task: Promise<void>): void {
    this.cleanups.add(task);
    void task.finally(() => this.cleanups.delete(task));
  }

  private async dispose(p: Prepared): Promise<void> {
    // The spare goes before the tmpfs it is bound to (not begun yet: it never begins).
    p.spare?.cancel();
    const spare = await p.spare?.promise;
    p.spare = undefined;
    if (spare) await this.dispose(spare);
    p.stream.destroy();
    await p.container.remove({ force: true, v: true }).catch((err: unknown) => this.logger.warn({ err }, 'container remove failed'));
    await rm(p.programDir, { recursive: true, force: true });
    // A fresh slot nobody took: its tmpfs goes with its container.
    if (p.slotDir) await unmountSlot(p.slotDir).catch((err: unknown) => this.logger.warn({ err }, 'slot unmount failed'));
  }

  async close(): Promise<void> {
    this.closed = true;
    const forDirs = [...this.forDirs.values()].flatMap((m) => [...m.values()].flat());
    for (const p of forDirs) p.cancel();
    const pending = [...[...this.pool.values()].flat(), ...forDirs.map((p) => p.promise)];
    this.pool.clear();
    this.forDirs.clear();
    await Promise.all([
      ...pending.map(async (p) => {
        const w = await p;
        if (w) await this.dispose(w);
      }),
      ...this.cleanups,
    ]);
  }

  /** Fills the pool for every runtime and who it is for (called at boot and after each take). */
  warmUp(): void {
    if (this.closed || this.config.SANDBOX_WARM_POOL === 0) return;
    for (const runtime of Object.keys(RUNTIMES) as Runtime[]) {
      for (const freshFor of FRESH_FOR) {
        const list = this.pool.get(`${freshFor}:${runtime}`) ?? [];
        while (list.length < this.config.SANDBOX_WARM_POOL) {
          list.push(
            this.prepareFresh(runtime, freshFor).catch((err: unknown) => {
              this.logger.warn({ err, for: freshFor }, 'fresh workspace container create failed');
              return undefined;
            }),
          );
        }
        this.pool.set(`${freshFor}:${runtime}`, list);
      }
    }
  }

  /** The pool's next fresh workspace for `freshFor` and `runtime`; undefined if none (or its create failed). */
  private async takeFresh(freshFor: FreshFor, runtime: Runtime): Promise<Prepared | undefined> {
    const next = this.pool.get(`${freshFor}:${runtime}`)?.shift();
    return next ? await next : undefined;
  }

  /**
   * The pools refill after a run's answer has left, not beside the run (a create + start next to
   * a run slowed it), and after the containers being prepared for workspaces' next runs (the
   * caller asks for its own right after the run returns, before this looks): those are the ones a
   * run may be waiting for.
   */
  private refillAfterRun(): void {
    void untilAnswered().then(() => {
      const pending = [...this.forDirs.values()].flatMap((m) => [...m.values()].flat().map((p) => p.promise));
      void Promise.allSettled(pending).then(() => this.warmUp());
    });
  }

  async takeFreshWorkspace(runtime: Runtime): Promise<string | undefined> {
    const p = await this.takeFresh('request', runtime);
    if (!p?.slotDir || p.exited) {
      if (p) this.defer(this.dispose(p));
      return undefined;
    }
    // The slot is the workspace's now (WorkspaceService unmounts it when the workspace goes); its
    // container waits for the run.
    const dir = p.slotDir;
    p.slotDir = undefined;
    const queue: Pending[] = [ready(p)];
    if (p.spare) queue.push(p.spare);
    p.spare = undefined;
    this.forDirs.set(dir, new Map([[runtime, queue]]));
    return dir;
  }

  prepareFor(dir: string, runtime: Runtime): void {
    if (this.closed || this.config.SANDBOX_WARM_POOL === 0) return;
    const byRuntime = this.forDirs.get(dir) ?? new Map<Runtime, Pending[]>();
    if (byRuntime.has(runtime)) return;
    if (byRuntime.size === 0 && this.forDirs.size >= MAX_PREPARED_FOR_DIRS) return;
    // Registered now, while the caller holds the workspace (releaseDir finds it); begun once the
    // caller's answer has left, so the create + start is not beside that answer's last steps.
    const pending = gated(untilAnswered(), () =>
      this.closed
        ? Promise.resolve(undefined)
        : this.prepare(runtime, { workspace: { kind: 'held', path: dir }, network: false }).catch((err: unknown) => {
            this.logger.warn({ err }, 'workspace container create failed');
            return undefined;
          }),
    );
    byRuntime.set(runtime, [pending]);
    this.forDirs.set(dir, byRuntime);
  }

  async releaseDir(dir: string): Promise<void> {
    const byRuntime = this.forDirs.get(dir);
    if (!byRuntime) return;
    this.forDirs.delete(dir);
    // Not begun yet: never begins (the unmount may be inside the very call whose answer it waits for).
    const pending = [...byRuntime.values()].flat();
    for (const p of pending) p.cancel();
    await Promise.all(
      pending.map(async ({ promise }) => {
        const p = await promise;
        if (p) await this.dispose(p);
      }),
    );
  }

  private async takeForDir(spec: ContainerRunSpec): Promise<Prepared | undefined> {
    if (spec.network || spec.workspace.kind !== 'held') return undefined;
    const byRuntime = this.forDirs.get(spec.workspace.path);
    const queue = byRuntime?.get(spec.runtime);
    const next = queue?.shift();
    if (!byRuntime || !queue || !next) return undefined;
    if (queue.length === 0) byRuntime.delete(spec.runtime);
    if (byRuntime.size === 0) this.forDirs.delete(spec.workspace.path);
    return await next.promise;
  }

  /**
   * A container on a fresh, empty workspace: for a run, its own tmpfs (inside the container); for a
   * request, a tmpfs the size of a session's quota mounted on the host (the request's workspace
   * keeps it after the run) and bound at /work.
   */
  private async prepareFresh(runtime: Runtime, freshFor: FreshFor): Promise<Prepared> {
    if (freshFor === 'run') return this.prepare(runtime, { workspace: { kind: 'own' }, network: false });
    const slotDir = join(this.slotsDir, randomBytes(12).toString('hex'));
    await mkdir(slotDir, { mode: 0o700 });
    const quota = this.config.SANDBOX_SESSION_QUOTA_MB;
    try {
      await runHostCommand('mount', [
        '-t',
        'tmpfs',
        '-o',
        `size=${quota}m,nr_inodes=${Math.max(1024, quota * 64)},mode=0700,uid=65534,gid=65534,nosuid,nodev,nosymfollow`,
        'drael-ws',
        slotDir,
      ]);
    } catch (err) {
      await rm(slotDir, { recursive: true, force: true });
      throw err;
    }
    const p = await this.prepare(runtime, { workspace: { kind: 'held', path: slotDir }, network: false }).catch(async (err: unknown) => {
      await unmountSlot(slotDir).catch(() => undefined);
      throw err;
    });
    p.slotDir = slotDir;
    // Its request's second run gets a container started ahead too (without one, it runs in one
    // prepared after the first run, or a cold one). The slot is ready to take without waiting for
    // it. Begun after the next answer, not now: this refill follows an answer already, and a
    // second create + start in the same gap ran beside the next run (a request's second run, sent
    // 150 ms after its first, took 1.37x a session-less one with it).
    p.spare = gated(afterNextAnswer(), () =>
      this.closed
        ? Promise.resolve(undefined)
        : this.prepare(runtime, { workspace: { kind: 'held', path: slotDir }, network: false }).catch((err: unknown) => {
            this.logger.warn({ err }, 'fresh workspace spare container create failed');
            return undefined;
          }),
    );
    return p;
  }

  /** A pooled container for a run with its own workspace (the pool's are network-less). */
  private takeOwn(spec: ContainerRunSpec): Promise<Prepared | undefined> {
    // A failed create resolves to undefined (logged): the run then creates its own.
    return spec.network ? Promise.resolve(undefined) : this.takeFresh('run', spec.runtime);
  }

  private async prepare(runtime: Runtime, spec: Pick<ContainerRunSpec, 'workspace' | 'network'>): Promise<Prepared> {
    const programDir = join(this.runsDir, randomBytes(12).toString('hex'));
    await mkdir(programDir, { mode: 0o755 });
    await chmod(programDir, 0o755);
    let container: Docker.Container | undefined;
    try {
      container = await this.create(runtime, programDir, spec);
      const stdout = new OutputCapture(MAX_CAPTURE_BYTES);
      const stderr = new OutputCapture(MAX_CAPTURE_BYTES);
      // Attach before start, or the first bytes are lost; stdin carries the line that begins the run.
      const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, logs: false, hijack: true })) as unknown as Duplex;
      const streamEnded = new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', () => resolve());
      });
      demuxDockerStream(stream, stdout, stderr);
      const waited = container.wait({ condition: 'next-exit' }) as Promise<{ StatusCode: number }>;
      const prepared: Prepared = { container, programDir, stream, streamEnded, stdout, stderr, waited, exited: false };
      // A warm container removed unused rejects its wait; that is not an error.
      waited.then(
        () => (prepared.exited = true),
        () => (prepared.exited = true),
      );
      // Container start time (drael_sandbox_container_start_seconds): now ahead of the run, off its path.
      const startBegan = performance.now();
      await container.start();
      recordContainerStart(runtime, performance.now() - startBegan);
      return prepared;
    } catch (err) {
      await container?.remove({ force: true }).catch(() => undefined);
      await rm(programDir, { recursive: true, force: true });
      throw err;
    }
  }

  private async create(runtime: Runtime, programDir: string, spec: Pick<ContainerRunSpec, 'workspace' | 'network'>): Promise<Docker.Container> {
    const c = this.config;
    const memory = c.SANDBOX_MEMORY_MB * 1024 * 1024;
    const quota = c.SANDBOX_SESSION_QUOTA_MB * 1024 * 1024;
    const tmpfs: Record<string, string> = {
      // Bounded in bytes and in inodes so neither a big file nor a file flood can exhaust memory.
      '/tmp': `rw,nosuid,nodev,size=${c.SANDBOX_TMP_MB}m,nr_inodes=4096,mode=1777`,
    };
    const binds = [`${programDir}:/sandbox:ro`];
    if (spec.workspace.kind === 'own') {
      tmpfs['/work'] = `rw,nosuid,nodev,size=${c.SANDBOX_SCRATCH_MB * 1024 * 1024},nr_inodes=8192,mode=0700,uid=65534,gid=65534`;
    } else {
      binds.push(`${spec.workspace.path}:/work:rw`);
    }
    const body: Docker.ContainerCreateOptions = {
      Image: c.SANDBOX_IMAGE,
      Cmd: ['/bin/sh', '-c', LAUNCHER, 'drael-run', ...RUNTIMES[runtime].cmd(`/sandbox/${RUNTIMES[runtime].file}`)],
      // Nothing of the service's environment: no secret can leak into a run.
      Env: [PATH_ENV, 'LANG=C.UTF-8', 'HOME=/tmp', 'PYTHONDONTWRITEBYTECODE=1', 'TMPDIR=/tmp'],
      WorkingDir: '/work',
      User: '65534:65534',
      Hostname: 'sandbox',
      Tty: false,
      OpenStdin: true,
      // Not closed when the service's attach ends (StdinOnce: true measured ~1.5 ms more on every
      // workspace run): a prepared container whose service died waits idle, using no CPU, until a
      // replica of its instance boots and removes it.
      StdinOnce: false,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      // Without a network, skipping Docker's network setup entirely also skips the libnetwork
      // prestart hook, the slowest part of a container start; the container still gets only `lo`.
      NetworkDisabled: !spec.network,
      Labels: { [LABEL]: '1', [LABEL_INSTANCE]: c.SANDBOX_INSTANCE, 'drael.sandbox.runtime': runtime },
      HostConfig: {
        NetworkMode: spec.network ? c.SANDBOX_EGRESS_NETWORK : 'none',
        ...(c.SANDBOX_OCI_RUNTIME ? { Runtime: c.SANDBOX_OCI_RUNTIME } : {}),
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges:true'],
        // The launcher is the container's init (pid 1): the program's `kill -9 -1` cannot reach it
        // (a pid namespace's init gets no signal it has no handler for from inside), so it always
        // lives to say the program ended; while it waits for the program, dash reaps every child,
        // orphans included, as docker-init did.
        Init: false,
        Privileged: false,
        Memory: memory,
        // memory + swap = memory: no swap, so a memory bomb is OOM-killed instead of thrashing.
        MemorySwap: memory,
        MemoryReservation: 0,
        OomKillDisable: false,
        OomScoreAdj: 1000,
        PidsLimit: c.SANDBOX_PIDS,
        NanoCpus: Math.round(c.SANDBOX_CPUS * 1e9),
        Ulimits: [
          { Name: 'nofile', Soft: c.SANDBOX_NOFILE, Hard: c.SANDBOX_NOFILE },
          // No single file larger than the session quota, wherever it is written.
          { Name: 'fsize', Soft: quota, Hard: quota },
          { Name: 'core', Soft: 0, Hard: 0 },
        ],
        Tmpfs: tmpfs,
        ShmSize: 16 * 1024 * 1024,
        IpcMode: 'private',
        Binds: binds,
        // Output is read from the attach stream; nothing is written to the host's disk.
        LogConfig: { Type: 'none', Config: {} },
        AutoRemove: false,
        RestartPolicy: { Name: 'no', MaximumRetryCount: 0 },
        Dns: spec.network ? [] : undefined,
      },
    };
    const created = await new Promise<{ Id: string; Warnings?: string[] | null }>((resolve, reject) => {
      this.docker.modem.dial(
        {
          path: '/containers/create?',
          method: 'POST',
          options: body,
          statusCodes: { 200: true, 201: true, 400: 'bad parameter', 404: 'no such image', 409: 'conflict', 500: 'server error' },
        },
        (err: unknown, data: unknown) =>
          err ? reject(err instanceof Error ? err : new Error('container create failed')) : resolve(data as { Id: string; Warnings?: string[] | null }),
      );
    });
    const container = this.docker.getContainer(created.Id);
    if (created.Warnings && created.Warnings.length > 0) {
      // A warning means the engine dropped a limit (e.g. swap accounting off): refuse to run.
      await container.remove({ force: true }).catch(() => undefined);
      throw new EngineDroppedLimitError(created.Warnings);
    }
    return container;
  }

  private async execute(p: Prepared, spec: ContainerRunSpec, signal?: AbortSignal): Promise<ContainerRunResult> {
    if (spec.maxStreamBytes > MAX_CAPTURE_BYTES) throw new Error('maxStreamBytes above the capture size');
    const { container, stdout, stderr } = p;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const kill = () => container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
    const onAbort = () => void kill();
    if (p.exited || p.stream.destroyed) throw new StartFailed(new Error('the prepared container ended before its run'));
    const mark = `drael-end-${randomBytes(16).toString('hex')}`;
    const ended = Promise.all([stdout.watchEnd(mark), stderr.watchEnd(mark)]);
    const startedAt = performance.now();
    try {
      const limitS = Math.ceil(spec.timeoutMs / 1000) + LAUNCHER_GRACE_S;
      await new Promise<void>((resolve, reject) => p.stream.write(`run ${mark} ${limitS}\n`, (err) => (err ? reject(new StartFailed(err)) : resolve())));
    } catch (err) {
      throw err instanceof StartFailed ? err : new StartFailed(err);
    }
    try {
      timer = setTimeout(() => {
        timedOut = true;
        void kill();
      }, spec.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Cancelled while the container was starting: the listener came too late to hear it.
      if (signal?.aborted) void kill();
      const first = await Promise.race([ended, p.waited]);
      const durationS = (performance.now() - startedAt) / 1000;
      // The program ended with 0 and all its output is here: the answer needs nothing more of the
      // engine (the container's own exit follows; it is removed after the answer, as always).
      const clean = Array.isArray(first) && first[0].status === 0 && first[1].status === 0;
      let state: { ExitCode?: number; OOMKilled: boolean } = { ExitCode: 0, OOMKilled: false };
      let statusCode = 0;
      if (!clean) {
        // It failed, or its launcher never said (killed by the timer or a cancel): the engine says how.
        statusCode = (await p.waited).StatusCode;
        clearTimeout(timer);
        await Promise.race([p.streamEnded, new Promise((r) => setTimeout(r, STREAM_DRAIN_MS))]);
        // Only a failed run needs the engine's record (OOM kill, its exit code).
        if (statusCode !== 0) state = (await container.inspect()).State;
      }
      // The launcher's end marks are not the program's output; bytes after them are of nothing it ran.
      const marks = await Promise.race([ended, Promise.resolve(undefined)]);
      const cut = (c: OutputCapture, at: number | undefined) => {
        const end = at ?? c.seen;
        return { bytes: c.bytes.subarray(0, Math.min(end, spec.maxStreamBytes)), truncated: end > spec.maxStreamBytes };
      };
      const out = cut(stdout, marks?.[0].at);
      const err = cut(stderr, marks?.[1].at);
      return {
        exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : statusCode,
        stdout: out.bytes,
        stderr: err.bytes,
        truncated: { stdout: out.truncated, stderr: err.truncated },
        // The launcher's own limit (the service's timer was late): a timeout all the same.
        timedOut: timedOut || durationS * 1000 >= spec.timeoutMs + LAUNCHER_GRACE_S * 1000,
        oomKilled: state.OOMKilled,
        durationS: Math.round(durationS * 1000) / 1000,
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** Unmounts a fresh workspace's tmpfs slot and removes its directory. */
async function unmountSlot(dir: string): Promise<void> {
  await runHostCommand('umount', [dir]).catch(() => runHostCommand('umount', ['-l', dir]));
  await rm(dir, { recursive: true, force: true });
}

/** The engine refused to start a created container. */
class StartFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('container start failed');
    this.name = 'StartFailed';
  }
}

class EngineDroppedLimitError extends SandboxError {
  constructor(readonly warnings: string[]) {
    super('runtime_unavailable', `the container engine dropped a limit, so the run was refused: ${warnings.join('; ')}`, false);
  }
}

/** Engine failures as typed errors: no image is runtime_unavailable; no engine is retryable. */
function engineError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (e.statusCode === 404 || /no such image/i.test(e.message ?? '')) {
    return new SandboxError('runtime_unavailable', 'the sandbox image is not installed (run infra/sandbox-image/build.sh)', false);
  }
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOENT' || e.code === 'EACCES') {
    return new SandboxError('unavailable', 'the container engine is not reachable', true);
  }
  return new SandboxError('internal', `container engine error: ${e.message ?? String(err)}`, true);
}
