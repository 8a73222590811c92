import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pg from 'pg';
import { deploy } from '@drael/db-migrate';
import { agentRunCatalog, type Agent, type Run, type RequestOf, type ReplyOf } from '@drael/contracts';
import { isRpcError, NatsRpcClient } from '@drael/nats-rpc';
import {
  startGatewayProcess,
  startScriptedUpstream,
  startServiceProcess,
  testPrefix,
  type GatewayProcess,
  type ScriptedUpstream,
  type ServiceProcess,
} from '@drael/test-support';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const BASE_DB = process.env.DATABASE_URL?.split('?')[0] ?? 'postgresql://postgres@127.0.0.1:5432/drael';
export const MODEL = 'test-model';

/** A Postgres schema of the test run's own, migrated with the app's real migrations. */
export async function freshSchema(): Promise<{ url: string; schema: string; drop(): Promise<void>; query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]> }> {
  const schema = `agent_run_t_${randomBytes(4).toString('hex')}`;
  const url = `${BASE_DB}?schema=${schema}`;
  const appDir = resolve(import.meta.dirname, '..');
  // The wasm schema engine's connect can time out on a loaded machine: try again before giving up.
  for (let attempt = 1; ; attempt++) {
    try {
      await deploy({ databaseUrl: url, schemaPath: resolve(appDir, 'prisma/schema.prisma'), migrationsDir: resolve(appDir, 'prisma/migrations') });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  const pool = new pg.Pool({ connectionString: BASE_DB, max: 2, options: `-c search_path="${schema}"` });
  return {
    url,
    schema,
    query: async <T,>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
    drop: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

export interface Stack {
  prefix: string;
  upstream: ScriptedUpstream;
  gateway: GatewayProcess;
  db: Awaited<ReturnType<typeof freshSchema>>;
  rpc: NatsRpcClient;
  env: Record<string, string>;
  receiptKey: string;
  workers: ServiceProcess[];
  startWorker(extra?: Record<string, string>): Promise<ServiceProcess>;
  call<K extends keyof typeof agentRunCatalog>(name: K, req: RequestOf<(typeof agentRunCatalog)[K]>): Promise<ReplyOf<(typeof agentRunCatalog)[K]>>;
  createAgent(accountId: string, agent?: Partial<{ tools: Array<'sandbox.execute'>; instructions: string; limits: { step_limit: number; budget_usd: number } }>): Promise<Agent>;
  waitForRun(accountId: string, runId: string, timeoutMs?: number): Promise<Run>;
  stop(): Promise<void>;
}

/** Real NATS, Postgres, Redis; the real gateway (inference subject) in front of a scripted upstream; agent-run as built. */
export async function startStack(options: { workerEnv?: Record<string, string>; workers?: number } = {}): Promise<Stack> {
  const prefix = testPrefix('ar');
  const upstream = await startScriptedUpstream({ turns: [], whenExhausted: 'error' });
  const db = await freshSchema();
  const gateway = await startGatewayProcess({
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    DRAEL_MODELS: JSON.stringify({ [MODEL]: { base_url: upstream.baseUrl, model: 'scripted' } }),
    DRAEL_BACKEND_SERVICES: 'agent-run',
  });
  const receiptKey = randomBytes(32).toString('hex');
  const env: Record<string, string> = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    AGENT_RUN_QUEUE_PREFIX: `drael-test:${prefix}`,
    AGENT_RUN_RECEIPT_KEY: receiptKey,
    AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
    ...options.workerEnv,
  };
  const rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  const workers: ServiceProcess[] = [];
  const stack: Stack = {
    prefix,
    upstream,
    gateway,
    db,
    rpc,
    env,
    receiptKey,
    workers,
    startWorker: async (extra = {}) => {
      const w = await startServiceProcess('agent-run', { ...env, ...extra }, { readyTimeoutMs: 60_000 });
      workers.push(w);
      // Warm the new process's first database queries, so the gateway's 5 s NATS timeouts hold on a busy machine.
      await stack.call('listAgents', { account_id: 'warm-up', limit: 1 }).catch(() => undefined);
      return w;
    },
    // Generous timeouts and a retry while no worker answers: workers boot slowly on a loaded 2-core machine.
    call: async (name, req) => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          return await rpc.request(agentRunCatalog[name], req as never, { timeoutMs: Math.max(agentRunCatalog[name].timeoutMs, 30_000) });
        } catch (err) {
          if (!(isRpcError(err) && err.code === 'unavailable') || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    createAgent: (accountId, agent = {}) =>
      stack.call('createAgent', {
        account_id: accountId,
        agent: { model: MODEL, instructions: agent.instructions ?? 'You are a test agent.', tools: agent.tools ?? ['sandbox.execute'], limits: agent.limits ?? { step_limit: 10, budget_usd: 1 } },
      }),
    waitForRun: async (accountId, runId, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      let after = 0;
      for (;;) {
        const { events, done } = await stack.call('runEvents', { account_id: accountId, run_id: runId, after, wait_ms: 2_000 });
        after = events.at(-1)?.seq ?? after;
        if (done) return stack.call('getRun', { account_id: accountId, run_id: runId });
        if (Date.now() > deadline) throw new Error(`run ${runId} did not finish in ${timeoutMs} ms`);
      }
    },
    stop: async () => {
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await rpc.close();
      await gateway.stop('SIGKILL');
      await upstream.close();
      await db.drop();
    },
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await stack.startWorker();
  return stack;
}

export const account = () => `acct_${randomBytes(4).toString('hex')}`;
