import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
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
