import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { NatsRpcClient } from '@drael/nats-rpc';
import { createTestKey, startBillingForTests, type TestKey, type TestKeyOptions } from './billing-for-tests.js';
import type { ServiceProcess } from './service-process.js';
import { registerGatewayForOpenApiCheck } from './openapi-check.js';

export interface GatewayProcess {
  /** e.g. http://127.0.0.1:40123 (the OpenAI base URL is `${url}/v1`) */
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote (JSON log lines), for assertions on logs. */
  output(): string;
  /** Resolves with the exit code when the process ends (null if a signal killed it). */
  readonly exited: Promise<number | null>;
  /** Sends the signal (SIGTERM by default) and waits for the exit code (then stops its billing). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** A key of a fresh account (every /v1 and /api route needs one); undefined with `billing: false`. */
  readonly key?: TestKey;
  /** `drael_...` of `key`, for OpenAI clients. */
  readonly apiKey: string;
  /** `{ authorization: 'Bearer drael_...' }` to spread into fetch headers. */
  readonly authHeaders: Record<string, string>;
  /** The billing service started for this gateway (same NATS prefix). */
  readonly billing?: ServiceProcess;
}

export interface GatewayProcessOptions {
  readyTimeoutMs?: number;
  /**
   * API keys come from the real billing service: by default one is started on the gateway's NATS
   * prefix and a key is made (options set its tool level, plan, limits). `false`: start none (the
   * test brings its own billing, or needs none).
   */
  billing?: false | TestKeyOptions;
  /** Extra environment of the billing started for this gateway (HEALTH_PORT, to scrape its /metrics). */
  billingEnv?: Record<string, string>;
}

const repoRoot = resolve(new URL('../../..', import.meta.url).pathname);

/**
 * Ports handed out below the kernel's ephemeral range (32768-60999 here, Linux's default), where
 * no outgoing connection takes one: a port the kernel picks with `listen(0)` is in that range, and
 * between this check and the test process's own bind an outgoing connection (to NATS, Redis,
 * Postgres: every test makes many) could take it as its local port. That happened in CI
 * (`listen EADDRINUSE` at a gateway's boot). A random start spreads the test workers apart.
 */
const FIRST_PORT = 20_000;
const LAST_PORT = 32_767;
const handedOut = new Set<number>();

/** A loopback port free now and outside the ephemeral range (see FIRST_PORT), never the same twice in one process. */
export async function freePort(): Promise<number> {
  const span = LAST_PORT - FIRST_PORT + 1;
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = FIRST_PORT + ((start + i) % span);
    if (handedOut.has(port)) continue;
    if (await canListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${FIRST_PORT}-${LAST_PORT}`);
}

/** Whether a listener can bind the port on every address (a listener on any one address refuses it). */
function canListen(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '0.0.0.0', () => srv.close(() => res(true)));
  });
}

/**
 * Starts the built gateway (apps/gateway/dist/main.js) as its own process on a free port and
 * waits until GET /healthz answers. `env` is the gateway's configuration (DRAEL_MODELS,
 * DRAEL_NATS_PREFIX, DRAEL_BACKEND_SERVICES, ...).
 */
export async function startGatewayProcess(env: Record<string, string>, options: GatewayProcessOptions = {}): Promise<GatewayProcess> {
  let billing: ServiceProcess | undefined;
  let key: TestKey | undefined;
  if (options.billing !== false) {
    billing = await startBillingForTests(env, options.billingEnv);
    const client = await NatsRpcClient.connect({ servers: env.NATS_URL ?? 'nats://127.0.0.1:4222', prefix: env.DRAEL_NATS_PREFIX ?? '', security: env });
    try {
      key = await createTestKey(client, options.billing ?? {});
    } finally {
      await client.close();
    }
  }
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
  // The billing started for this gateway ends with it, however the gateway ends.
  const billingStopped = exited.then(() => billing?.stop());
  const url = `http://127.0.0.1:${port}`;
  const handle: GatewayProcess = {
    url,
    port,
    child,
    exited,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      await billingStopped;
      return code;
    },
    key,
    apiKey: key?.api_key ?? '',
    authHeaders: key ? { authorization: `Bearer ${key.api_key}` } : {},
    billing,
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode} before it was ready:\n${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) {
        // Where a test installed the check (installOpenApiFetchCheck), this gateway's answers are judged by its /openapi.json.
        registerGatewayForOpenApiCheck(url);
        return handle;
      }
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
