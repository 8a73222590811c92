import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { healthEntry, type ServiceName } from '@drael/contracts';
import { HEALTH_CHECK_TIMEOUT_MS, NatsRpcClient } from '@drael/nats-rpc';

/** A NATS subject prefix of its own, so a test's services never answer another test's requests. */
export function testPrefix(label = 't'): string {
  return `${label}-${randomBytes(5).toString('hex')}`;
}

export interface ServiceProcess {
  readonly service: ServiceName;
  readonly child: ChildProcess;
  /** Everything the process wrote, for assertions on logs. */
  output(): string;
  /** SIGTERM, then wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const repoRoot = resolve(new URL('../../..', import.meta.url).pathname);

/**
 * Starts a built service (apps/<service>/dist/main.js) as its own process, the way production runs
 * it, and waits until it answers its health subject over NATS (ok, or a typed answer naming a
 * dependency that is down, which some tests set up on purpose).
 */
export async function startServiceProcess(
  service: ServiceName,
  env: Record<string, string>,
  options: { readyTimeoutMs?: number; waitForHealth?: boolean } = {},
): Promise<ServiceProcess> {
  const cwd = resolve(repoRoot, 'apps', service);
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));

  const handle: ServiceProcess = {
    service,
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (options.waitForHealth === false) return handle;

  const client = await NatsRpcClient.connect({ servers: env.NATS_URL ?? 'nats://127.0.0.1:4222', prefix: env.DRAEL_NATS_PREFIX ?? '', security: env });
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${service} exited with ${child.exitCode} before it was ready:\n${out}`);
      try {
        // Longer than a health answer can take (each dependency check is bounded at
        // HEALTH_CHECK_TIMEOUT_MS): a service whose dependency hangs still answers, naming it.
        await client.request(healthEntry(service), {}, { timeoutMs: HEALTH_CHECK_TIMEOUT_MS + 700 });
        return handle;
      } catch (err) {
        // Booted, with a dependency down (a test of that case): the health handler itself answered.
        if ((err as { details?: { checks?: unknown } }).details?.checks) return handle;
        if (Date.now() > deadline) {
          await handle.stop('SIGKILL');
          throw new Error(`${service} did not answer ${service}.health.v1 in time:\n${out}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await client.close();
  }
}
