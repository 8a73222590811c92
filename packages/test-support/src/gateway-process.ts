import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';

export interface GatewayProcess {
  /** e.g. http://127.0.0.1:40123 (the OpenAI base URL is `${url}/v1`) */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote (JSON log lines), for assertions on logs. */
  output(): string;
  /** Resolves with the exit code when the process ends (null if a signal killed it). */
  readonly exited: Promise<number | null>;
  /** Sends the signal (SIGTERM by default) and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const repoRoot = resolve(new URL('../../..', import.meta.url).pathname);

/** A free loopback port (the tiny race between closing and reuse is acceptable in tests). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => res(port));
    });
  });
}

/**
 * Starts the built gateway (apps/gateway/dist/main.js) as its own process on a free port and
 * waits until GET /healthz answers. `env` is the gateway's configuration (DRAEL_MODELS,
 * DRAEL_NATS_PREFIX, DRAEL_BACKEND_SERVICES, ...).
 */
export async function startGatewayProcess(env: Record<string, string>, options: { readyTimeoutMs?: number } = {}): Promise<GatewayProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: resolve(repoRoot, 'apps', 'gateway'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  const url = `http://127.0.0.1:${port}`;
  const handle: GatewayProcess = {
    url,
    port,
    child,
    exited,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode} before it was ready:\n${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await handle.stop('SIGKILL');
      throw new Error(`gateway did not answer /healthz in time:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
