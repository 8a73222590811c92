import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './gateway-process.js';

/**
 * A Redis or NATS server of the test's own, on a port of its own, for tests that stop or restart
 * it (the machine's shared instances are never stopped: other tests use them). stop() kills only
 * this process; start() brings it back on the same port (and, for NATS, the same JetStream dir).
 */
export interface OwnServer {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing is answered (a hung or partitioned server). */
  freeze(): void;
  /** SIGCONT after freeze(): it answers again, what was sent meanwhile included (nothing when it is not running). */
  thaw(): void;
  /** stop(), then remove its files. */
  dispose(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((res) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not open port ${port}`);
}

function ownServer(what: string, url: (port: number) => string, argv: (port: number, dir: string) => [string, string[]]): Promise<OwnServer> {
  return (async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), `drael-${what}-`));
    let child: ChildProcess | undefined;
    const start = async () => {
      const [cmd, args] = argv(port, dir);
      child = spawn(cmd, args, { stdio: 'ignore' });
      await waitForPort(port, child, what);
    };
    const stop = async () => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    };
    await start();
    const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
    return {
      port,
      url: url(port),
      start,
      stop,
      freeze: () => {
        if (!running()) throw new Error(`${what} is not running`);
        child!.kill('SIGSTOP');
      },
      thaw: () => {
        if (running()) child!.kill('SIGCONT');
      },
      dispose: async () => {
        await stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  })();
}

/** redis-server without persistence: a restart loses every key (as a Redis without AOF/RDB does). */
export function startOwnRedis(): Promise<OwnServer> {
  return ownServer(
    'redis',
    (p) => `redis://127.0.0.1:${p}`,
    (port, dir) => ['redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]],
  );
}

/**
 * nats-server with JetStream, its store in a directory of its own. `args`: more flags (a token,
 * `--auth`); `jetstream`: the server's own JetStream limits (a config file is written for them).
 */
export function startOwnNats(options: { args?: readonly string[]; jetstream?: { maxFileStore: string; maxMemoryStore?: string }; maxPayload?: string } = {}): Promise<OwnServer> {
  return ownServer(
    'nats',
    (p) => `nats://127.0.0.1:${p}`,
    (port, dir) => {
      if (!options.jetstream) return ['nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, ...(options.args ?? [])]];
      const { maxFileStore, maxMemoryStore = '16MB' } = options.jetstream;
      const conf = join(dir, 'nats.conf');
      writeFileSync(
        conf,
        `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}", max_file_store: ${maxFileStore}, max_memory_store: ${maxMemoryStore} }\n${options.maxPayload ? `max_payload: ${options.maxPayload}\n` : ''}`,
      );
      return ['nats-server', ['-c', conf, ...(options.args ?? [])]];
    },
  );
}
