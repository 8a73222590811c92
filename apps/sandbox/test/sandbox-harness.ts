import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sandboxCatalog, type ReplyOf, type RequestOf, type RpcEntry, type SandboxRunReply } from '@drael/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { cleanSandboxInstance, startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';
import { bucketNameOf } from '../src/placement/sandbox-stores.js';

export const exec = promisify(execFile);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

export interface Sandbox {
  prefix: string;
  instance: string;
  stateDir: string;
  env: Record<string, string>;
  proc: ServiceProcess;
  client: NatsRpcClient;
  run(req: RequestOf<typeof sandboxCatalog.run>): Promise<SandboxRunReply>;
  call<E extends RpcEntry>(entry: E, payload: RequestOf<E>): Promise<ReplyOf<E>>;
  /** The typed error a call fails with (fails the test if it succeeds). */
  errorOf<E extends RpcEntry>(entry: E, payload: RequestOf<E>): Promise<RpcError>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the built sandbox service as its own process, with its own NATS prefix, label and state
 * dir. `join` puts it on another sandbox's prefix instead: a second replica of the same service.
 */
export async function startSandbox(extraEnv: Record<string, string> = {}, options: { join?: Sandbox } = {}): Promise<Sandbox> {
  const prefix = options.join?.prefix ?? testPrefix('sbx');
  const instance = options.join ? `${options.join.instance}-r${Math.random().toString(36).slice(2, 6)}` : `test-${prefix.slice(4)}`;
  const stateDir = `/var/lib/drael/sandbox-test/${instance}`;
  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    SANDBOX_INSTANCE: instance,
    SANDBOX_STATE_DIR: stateDir,
    SANDBOX_MAX_CONCURRENT: '2',
    SANDBOX_WARM_POOL: '1',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  let proc = await startServiceProcess('sandbox', env, { readyTimeoutMs: 60_000 });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  const sandbox: Sandbox = {
    prefix,
    instance,
    stateDir,
    env,
    get proc() {
      return proc;
    },
    client,
    run: (req) => client.request(sandboxCatalog.run, req),
    call: (entry, payload) => client.request(entry, payload),
    errorOf: async (entry, payload) => {
      try {
        const r = await client.request(entry, payload);
        throw new Error(`expected a typed error, got ${JSON.stringify(r).slice(0, 500)}`);
      } catch (err) {
        if (err instanceof RpcError) return err;
        throw err;
      }
    },
    restart: async () => {
      proc = await startServiceProcess('sandbox', env, { readyTimeoutMs: 60_000 });
    },
    stop: async () => {
      await client.close();
      await proc.stop('SIGKILL');
      // Containers, mounts and state dir; the first replica of a prefix owns its JetStream buckets (named after the prefix).
      await cleanSandboxInstance(instance, stateDir, options.join ? undefined : prefix);
    },
  };
  return sandbox;
}

const sha = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 40);

/** A session's (or a request workspace's) key in the placement KV (WorkspaceService.keyOf: the hashes of its names on disk). */
export function placementKeyOf(tenant: string, session: string, scope: 'session' | 'request' = 'session'): string {
  return `${scope}.${sha(`tenant\0${tenant}`)}.${sha(`${scope}\0${tenant}\0${session}`)}`;
}

/**
 * The placement KV of a sandbox's prefix, as the service names it, and `messagesOf(key)`: how many
 * messages its stream holds for a key (a record, or a delete's marker, counts one); close `nc` when done.
 */
export async function placementKv(prefix: string): Promise<{ kv: KV; nc: NatsConnection; messagesOf: (key: string) => Promise<number> }> {
  const nc = await connect({ servers: NATS_URL });
  const bucket = bucketNameOf('', prefix, 'placement');
  const jsm = await jetstreamManager(nc);
  const messagesOf = async (key: string) => Object.keys((await jsm.streams.info(`KV_${bucket}`, { subjects_filter: `$KV.${bucket}.${key}` })).state.subjects ?? {}).length;
  return { kv: await new Kvm(nc).open(bucket), nc, messagesOf };
}

/**
 * Rewrites a session's placement record at its revision, as another replica would: read, change,
 * compare-and-set, again if the holder wrote it in between (it notes a run's use after answering).
 */
export async function rewritePlacementRecord(
  prefix: string,
  tenant: string,
  session: string,
  change: (record: Record<string, unknown>) => Record<string, unknown> | undefined,
): Promise<void> {
  const { kv, nc } = await placementKv(prefix);
  try {
    const key = placementKeyOf(tenant, session);
    for (let attempt = 1; ; attempt++) {
      const e = await kv.get(key);
      const next = change(JSON.parse(e!.string()) as Record<string, unknown>);
      try {
        if (next === undefined) await kv.delete(key, { previousSeq: e!.revision });
        else await kv.update(key, JSON.stringify(next), e!.revision);
        return;
      } catch (err) {
        if (attempt >= 20 || !/wrong last sequence/.test((err as Error).message)) throw err;
      }
    }
  } finally {
    await nc.close();
  }
}

export async function containersOf(instance: string, status?: 'running' | 'created'): Promise<string[]> {
  const args = ['ps', '-aq', '--no-trunc', '--filter', `label=drael.sandbox.instance=${instance}`];
  if (status) args.push('--filter', `status=${status}`);
  const { stdout } = await exec('docker', args);
  return stdout.split('\n').filter(Boolean);
}

/**
 * Each of the instance's containers (or only its running ones) with the host path mounted at
 * /work. A container can be removed between the listing and the inspect (a run's container after
 * its answer): `docker inspect` then exits 1 but still prints every container it found, which is
 * what is wanted here.
 */
export async function workMountsOf(instance: string, status?: 'running'): Promise<Map<string, string>> {
  const ids = await containersOf(instance, status);
  const mounts = new Map<string, string>();
  if (ids.length === 0) return mounts;
  const format = '{{.Id}} {{range .Mounts}}{{if eq .Destination "/work"}}{{.Source}}{{end}}{{end}}';
  const stdout = await exec('docker', ['inspect', '--format', format, ...ids]).then(
    (r) => r.stdout,
    (error: { stdout?: string; stderr?: string }) => {
      if (!/no such (object|container)/i.test(error.stderr ?? '')) throw error;
      return error.stdout ?? '';
    },
  );
  for (const line of stdout.split('\n')) {
    const [id, source] = line.split(' ');
    if (id) mounts.set(id, source ?? '');
  }
  return mounts;
}

/** Host processes whose command line contains `marker` (containers' processes are visible from the host). */
export async function hostProcessesWith(marker: string): Promise<string[]> {
  const { stdout } = await exec('ps', ['-eo', 'pid,args']);
  return stdout.split('\n').filter((l) => l.includes(marker) && !l.includes('ps -eo'));
}

export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');
export const unb64 = (s: string) => Buffer.from(s, 'base64').toString();
export const stateSessions = (stateDir: string) => join(stateDir, 'sessions');
