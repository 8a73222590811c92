import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { healthEntry, type ServiceName } from '@drael/contracts';
import { connect } from '@nats-io/transport-node';
import { HEALTH_CHECK_TIMEOUT_MS, NatsRpcClient, natsConnectOptions } from '@drael/nats-rpc';

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
 * dependency that is down, which some tests set up on purpose) and is itself listening: the
 * health subject is a queue group, so a replica joining a running one is answered for by the
 * other until its own subscriptions exist (`$SRV.PING` names each process: host and pid).
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
        if (await listening(service, env, child.pid)) return handle;
        throw new Error(`${service} (pid ${child.pid}) is not listening yet`);
      } catch (err) {
        // Booted, with a dependency down (a test of that case): the health handler answered, maybe this process's.
        if ((err as { details?: { checks?: unknown } }).details?.checks && (await listening(service, env, child.pid))) return handle;
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

/** Whether the process `pid` answers `$SRV.PING.<service>` under this env's prefix: its subscriptions exist. */
async function listening(service: ServiceName, env: Record<string, string>, pid: number | undefined): Promise<boolean> {
  const nc = await connect({ servers: env.NATS_URL ?? 'nats://127.0.0.1:4222', ...natsConnectOptions(env) });
  try {
    const prefix = env.DRAEL_NATS_PREFIX ?? '';
    const replies = await nc.requestMany(`$SRV.PING.${service}`, '', { maxWait: 500 });
    for await (const m of replies) {
      const { metadata = {} } = m.json<{ metadata?: Record<string, string> }>();
      if ((metadata.prefix ?? '') === prefix && metadata.pid === String(pid)) return true;
    }
    return false;
  } finally {
    await nc.close();
  }
}
