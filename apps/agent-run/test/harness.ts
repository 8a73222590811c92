import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pg from 'pg';
import { deploy } from '@drael/db-migrate';
import { agentRunCatalog, billingCatalog, type Agent, type Run, type RequestOf, type ReplyOf, type ToolLevel } from '@drael/contracts';
import { isRpcError, NatsRpcClient } from '@drael/nats-rpc';
import { AgentRepository } from '../src/agents/agent.repository.js';
import { createPrisma, type PrismaService } from '../src/db/prisma.service.js';
import { RunRepository } from '../src/runs/run.repository.js';
import {
  createTestKey,
  startGatewayProcess,
  startScriptedUpstream,
  startServiceProcess,
  cleanSandboxInstance,
  testPrefix,
  type GatewayProcess,
  type ScriptedUpstream,
  type ScriptedUpstreamOptions,
  type ServiceProcess,
  type TestKey,
} from '@drael/test-support';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const BASE_DB = process.env.DATABASE_URL?.split('?')[0] ?? 'postgresql://postgres@127.0.0.1:5432/drael';
export const MODEL = 'test-model';

/** A Postgres schema of the test run's own, migrated with the app's real migrations (agent-run's, or billing's). */
export async function freshSchema(
  app: 'agent-run' | 'billing' = 'agent-run',
): Promise<{ url: string; schema: string; drop(): Promise<void>; query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]> }> {
  const schema = `${app === 'billing' ? 'billing_ar' : 'agent_run'}_t_${randomBytes(4).toString('hex')}`;
  const url = `${BASE_DB}?schema=${schema}`;
  const appDir = resolve(import.meta.dirname, '..', '..', app);
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
    query: async <T>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
    drop: async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** A fresh schema with the agent and run repositories on it (the repository tests, which need no service). */
export async function freshRepositories(poolSize = 2) {
  const db = await freshSchema();
  const prisma = createPrisma(db.url, poolSize);
  const service = { client: prisma } as PrismaService;
  return {
    db,
    prisma,
    agents: new AgentRepository(service),
    runs: new RunRepository(service),
    close: async () => {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}

/** A request as the tests write it: the caller's tool level defaults to the highest (tests of levels give it). */
type TestRequest<K extends keyof typeof agentRunCatalog> =
  RequestOf<(typeof agentRunCatalog)[K]> extends infer R ? (R extends { tool_level: ToolLevel } ? Omit<R, 'tool_level'> & { tool_level?: ToolLevel } : R) : never;

export interface Stack {
  prefix: string;
  upstream: ScriptedUpstream;
  /** The gateway, with a key of a funded billing account. */
  gateway: GatewayProcess & { key: TestKey };
  db: Awaited<ReturnType<typeof freshSchema>>;
  /** billing's own schema of this stack (spend holds, wallets). */
  billingDb: Awaited<ReturnType<typeof freshSchema>>;
  billing: ServiceProcess;
  rpc: NatsRpcClient;
  env: Record<string, string>;
  /** billing's receipt signing key (Ed25519 seed, hex). */
  receiptKey: string;
  workers: ServiceProcess[];
  /** A billing account that owns agents, with a balance (USD) and a generous step rate. */
  account(balanceUsd?: number): Promise<string>;
  startWorker(extra?: Record<string, string>): Promise<ServiceProcess>;
  call<K extends keyof typeof agentRunCatalog>(name: K, req: TestRequest<K>): Promise<ReplyOf<(typeof agentRunCatalog)[K]>>;
  createAgent(accountId: string, agent?: Partial<{ tools: Array<'sandbox.execute'>; instructions: string; limits: { step_limit: number; budget_usd: number } }>): Promise<Agent>;
  waitForRun(accountId: string, runId: string, timeoutMs?: number): Promise<Run>;
  stop(): Promise<void>;
}

/** Real NATS, Postgres, Redis; the real gateway (inference subject) in front of a scripted upstream; agent-run as built. */
export async function startStack(options: { workerEnv?: Record<string, string>; workers?: number; choose?: ScriptedUpstreamOptions['choose'] } = {}): Promise<Stack> {
  const prefix = testPrefix('ar');
  // `choose`: the upstream answers each model call from its request (concurrent runs of several accounts), not in order.
  const upstream = await startScriptedUpstream({ turns: [], whenExhausted: 'error', choose: options.choose });
  const db = await freshSchema();
  const billingDb = await freshSchema('billing');
  // The real billing service: it holds and settles every step's money and signs the receipts.
  const receiptKey = randomBytes(32).toString('hex');
  const billing = await startServiceProcess(
    'billing',
    { NATS_URL, DRAEL_NATS_PREFIX: prefix, DATABASE_URL: billingDb.url, DATABASE_POOL_SIZE: '4', LOG_LEVEL: 'warn', BILLING_RECEIPT_KEY: receiptKey },
    { readyTimeoutMs: 60_000 },
  );
  const g = await startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      DRAEL_MODELS: JSON.stringify({ [MODEL]: { base_url: upstream.baseUrl, model: 'scripted' } }),
      DRAEL_BACKEND_SERVICES: 'agent-run',
    },
    { billing: false },
  );
  const env: Record<string, string> = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DATABASE_URL: db.url,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    AGENT_RUN_QUEUE_PREFIX: `drael-test:${prefix}`,
    AGENT_RUN_INFERENCE_RETRY_BASE_MS: '20',
    // Long enough for a gateway to boot again (inference-routing.spec), short enough for the test that waits it out.
    AGENT_RUN_INFERENCE_UNSERVED_WAIT_MS: '20000',
    AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
    ...options.workerEnv,
  };
  const rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  const fund = async (accountId: string, balanceUsd: number) => {
    if (balanceUsd > 0) await rpc.request(billingCatalog.creditWallet, { account_id: accountId, amount_micros: Math.round(balanceUsd * 1_000_000) }, { timeoutMs: 15_000 });
    await rpc.request(billingCatalog.setAgentLimits, { account_id: accountId, agent_steps_per_minute: 100_000 }, { timeoutMs: 15_000 });
  };
  const key = await createTestKey(rpc);
  await fund(key.account_id, 100);
  const gateway = { ...g, key, apiKey: key.api_key, authHeaders: { authorization: `Bearer ${key.api_key}` } };
  const workers: ServiceProcess[] = [];
  const stack: Stack = {
    prefix,
    upstream,
    gateway,
    db,
    billingDb,
    billing,
    rpc,
    env,
    receiptKey,
    workers,
    account: async (balanceUsd = 100) => {
      const { account_id } = await rpc.request(billingCatalog.createAccount, { name: 'agent-run-test', plan: 'free' }, { timeoutMs: 15_000 });
      await fund(account_id, balanceUsd);
      return account_id;
    },
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
          const withLevel = LEVELLED.has(name) ? { tool_level: 'l4_browser', ...(req as object) } : req;
          return await rpc.request(agentRunCatalog[name], withLevel as never, { timeoutMs: Math.max(agentRunCatalog[name].timeoutMs, 30_000) });
        } catch (err) {
          if (!(isRpcError(err) && err.code === 'unavailable') || Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    },
    createAgent: (accountId, agent = {}) =>
      stack.call('createAgent', {
        account_id: accountId,
        agent: {
          model: MODEL,
          instructions: agent.instructions ?? 'You are a test agent.',
          tools: agent.tools ?? ['sandbox.execute'],
          limits: agent.limits ?? { step_limit: 10, budget_usd: 1 },
        },
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
      await billing.stop('SIGKILL');
      await upstream.close();
      await db.drop();
      await billingDb.drop();
    },
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await stack.startWorker();
  return stack;
}

const LEVELLED = new Set<string>(['createAgent', 'updateAgent', 'deleteAgent', 'createRun']);

/** An account id billing does not know: for tests that never reach billing (scoping, repository). */
export const account = () => `acct_${randomBytes(4).toString('hex')}`;

/** The real sandbox service (Docker) on a stack's NATS prefix, with a label and state dir of its own. */
export interface StackSandbox {
  /** The sandbox's instance label: its containers carry `drael.sandbox.instance=<instance>`. */
  readonly instance: string;
  /** Kills the service, then removes its containers, unmounts its volumes and deletes its state. */
  stop(): Promise<void>;
}

export async function startSandboxFor(stack: Stack, tag: string, env: { SANDBOX_WARM_POOL: string }): Promise<StackSandbox> {
  const instance = `test-${tag}-${stack.prefix.slice(3)}`;
  const stateDir = `/var/lib/drael/sandbox-test/${instance}`;
  const sandbox = await startServiceProcess(
    'sandbox',
    { NATS_URL, DRAEL_NATS_PREFIX: stack.prefix, SANDBOX_INSTANCE: instance, SANDBOX_STATE_DIR: stateDir, SANDBOX_MAX_CONCURRENT: '2', LOG_LEVEL: 'warn', ...env },
    { readyTimeoutMs: 90_000 },
  );
  return {
    instance,
    async stop() {
      await sandbox.stop('SIGKILL');
      await cleanSandboxInstance(instance, stateDir, stack.prefix);
    },
  };
}
