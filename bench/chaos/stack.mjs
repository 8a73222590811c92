// Boots the chaos run's stack as processes on loopback: its own NATS (JetStream) and Redis, 3
// replicas of billing, search, fetch, sandbox and agent-run, 2 gateways, the doubles of what lies
// outside Drael, and one funded account (key, wallet, agent, session) per driver.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  cleanSandboxInstance,
  createTestKey,
  startBillingForTests,
  startGatewayProcess,
  startOwnNats,
  startOwnRedis,
  startServiceProcess,
  testBillingDatabaseUrl,
} from '../../packages/test-support/dist/index.js';
import { NatsRpcClient } from '../../packages/nats-rpc/dist/index.js';
import { billingCatalog } from '../../packages/contracts/dist/index.js';
import { deploy } from '../../packages/db-migrate/dist/index.js';
import { PAGE_HOST, startBreachProvider, startModelDouble, startPageServer } from './doubles.mjs';

const root = resolve(import.meta.dirname, '../..');
const fromApp = async (app, pkg) => import(pathToFileURL(createRequire(resolve(root, 'apps', app, 'package.json')).resolve(pkg)).href);
const pg = (await fromApp('agent-run', 'pg')).default;

export const REPLICAS = 3;
export const MODEL = 'chaos-model';
// Short, so the "no hold left open after the sweeper's window" check runs seconds after the drive.
export const TOOL_HOLD_TTL_S = 20;
export const SWEEP_INTERVAL_MS = 2_000;
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';

/** Boot steps on a loaded 2-core machine can miss their own 15-30 s bounds: try again before giving up. */
export async function retry(log, what, fn, attempts = 3) {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw err;
      log(`${what} failed, trying again`, { error: String(err?.message ?? err).slice(0, 200) });
    }
  }
}

/** A replica: its process handle, its name, and (sandbox) its instance and state dir. */
async function startReplicas(log, service, count, start) {
  const list = [];
  for (let i = 0; i < count; i++) list.push({ name: `${service}[${i}]`, ...(await retry(log, `${service} boot`, () => start(i))) });
  return list;
}

/**
 * `cleanups` collects what to undo, in reverse order, however the run ends.
 * `drivers` accounts are made, each with a key, a wallet for its agent's runs, an agent and a session.
 */
export async function startStack({ log, cleanups, drivers }) {
  const prefix = `chaos-${randomBytes(4).toString('hex')}`;
  const nats = await startOwnNats();
  cleanups.push(() => nats.dispose());
  const redis = await startOwnRedis();
  cleanups.push(() => redis.dispose());
  const env = { NATS_URL: nats.url, DRAEL_NATS_PREFIX: prefix, REDIS_URL: redis.url, LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn' };
  log('own NATS and Redis up', { nats: nats.url, redis: redis.url, prefix });

  const model = await startModelDouble();
  cleanups.push(() => model.close());
  const breach = await startBreachProvider();
  cleanups.push(() => breach.close());
  const pages = await startPageServer();
  cleanups.push(() => pages.close());

  // agent-run's rows in a schema of this run's own (billing's: the tests' shared schema, by account).
  const base = (process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael').split('?')[0];
  const agentSchema = `agent_run_${prefix.replace(/-/g, '_')}`;
  const agentDbUrl = `${base}?schema=${agentSchema}`;
  const agentDir = resolve(root, 'apps/agent-run');
  await retry(log, 'agent-run migrations', () =>
    deploy({ databaseUrl: agentDbUrl, schemaPath: resolve(agentDir, 'prisma/schema.prisma'), migrationsDir: resolve(agentDir, 'prisma/migrations') }),
  );
  const agentDb = new pg.Pool({ connectionString: base, max: 2, options: `-c search_path="${agentSchema}"` });
  cleanups.push(async () => {
    await agentDb.query(`DROP SCHEMA IF EXISTS "${agentSchema}" CASCADE`);
    await agentDb.end();
  });
  const billingUrl = new URL(testBillingDatabaseUrl());
  const billingSchema = billingUrl.searchParams.get('schema');
  const billingDb = new pg.Pool({ connectionString: base, max: 2, options: `-c search_path="${billingSchema}"` });
  cleanups.push(() => billingDb.end());

  const replicas = {};
  const receiptKey = randomBytes(32).toString('hex');
  replicas.billing = await startReplicas(log, 'billing', REPLICAS, () =>
    startBillingForTests(env, { BILLING_RECEIPT_KEY: receiptKey, BILLING_SWEEP_INTERVAL_MS: String(SWEEP_INTERVAL_MS) }),
  );
  const searchEnv = { ...env, SEARXNG_URL, SEARCH_CACHE_PREFIX: `chaos:${prefix}:search:`, SEARCH_VERIFY: 'false' };
  replicas.search = await startReplicas(log, 'search', REPLICAS, () => startServiceProcess('search', searchEnv, { readyTimeoutMs: 90_000 }));
  // Plain HTTP fetches only: three Chromiums would starve a 2-core machine.
  const fetchEnv = { ...env, FETCH_BROWSER: 'off', FETCH_TEST_ALLOW_CIDRS: `${PAGE_HOST}/32`, FETCH_CACHE_PREFIX: `chaos:${prefix}:fetch:` };
  replicas.fetch = await startReplicas(log, 'fetch', REPLICAS, () => startServiceProcess('fetch', fetchEnv, { readyTimeoutMs: 90_000 }));
  replicas.sandbox = await startReplicas(log, 'sandbox', REPLICAS, async (i) => {
    const instance = `${prefix}-sbx${i}`;
    const stateDir = `/var/lib/drael/sandbox-chaos/${instance}`;
    cleanups.push(() => cleanSandboxInstance(instance, stateDir));
    const sandboxEnv = {
      ...env,
      SANDBOX_INSTANCE: instance,
      SANDBOX_STATE_DIR: stateDir,
      SANDBOX_MAX_CONCURRENT: '2',
      SANDBOX_WARM_POOL: '1',
      SANDBOX_SESSION_QUOTA_MB: '16',
      // A short heartbeat TTL, so a survivor takes a killed holder's sessions over within seconds.
      SANDBOX_REPLICA_TTL_S: '3',
      // Takeovers are logged at info: the sessions check quotes them when a file is missing.
      LOG_LEVEL: 'info',
    };
    return { instance, stateDir, ...(await startServiceProcess('sandbox', sandboxEnv, { readyTimeoutMs: 90_000 })) };
  });
  const agentEnv = {
    ...env,
    DATABASE_URL: agentDbUrl,
    DATABASE_POOL_SIZE: '4',
    AGENT_RUN_QUEUE_PREFIX: `chaos:${prefix}`,
    AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
    // Bounded: a killed worker's run is reaped within seconds, a job Redis lost is given again soon,
    // and no run outlives the check's wait.
    AGENT_RUN_LEASE_MS: '6000',
    AGENT_RUN_RECONCILE_MS: '2000',
    AGENT_RUN_RECONCILE_AFTER_MS: '5000',
    AGENT_RUN_WALL_CLOCK_MS: '60000',
    AGENT_RUN_INFERENCE_RETRY_BASE_MS: '200',
    AGENT_RUN_DRAIN_MS: '2000',
  };
  replicas['agent-run'] = await startReplicas(log, 'agent-run', REPLICAS, () => startServiceProcess('agent-run', agentEnv, { readyTimeoutMs: 90_000 }));
  for (const list of Object.values(replicas)) for (const r of list) cleanups.push(() => r.stop('SIGKILL'));
  log('replicas up', Object.fromEntries(Object.entries(replicas).map(([k, v]) => [k, v.length])));

  const gwEnv = {
    ...env,
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    DRAEL_MODELS: JSON.stringify({ [MODEL]: { base_url: model.baseUrl, model: 'scripted' } }),
    DRAEL_BREACH_PROVIDER: JSON.stringify({ url: breach.url, api_key: 'sk-chaos' }),
    DRAEL_TOOL_HOLD_TTL_S: String(TOOL_HOLD_TTL_S),
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
  };
  const gateways = [];
  for (let i = 0; i < 2; i++) {
    const g = await retry(log, 'gateway boot', () => startGatewayProcess(gwEnv, { billing: false, readyTimeoutMs: 90_000 }));
    gateways.push({ ...g, name: `gateway[${i}]`, alive: true });
    cleanups.push(() => g.stop('SIGKILL'));
  }
  log('gateways up', { gateways: gateways.map((g) => g.url) });

  const rpc = await NatsRpcClient.connect({ servers: nats.url, prefix });
  cleanups.push(() => rpc.close());
  const accounts = [];
  for (let i = 0; i < drivers; i++) {
    const key = await retry(log, 'test key', () => createTestKey(rpc, { plan: 'pro' }));
    await retry(log, 'wallet credit', () => rpc.request(billingCatalog.creditWallet, { account_id: key.account_id, amount_micros: 50_000_000 }, { timeoutMs: 15_000 }));
    await retry(log, 'agent limits', () => rpc.request(billingCatalog.setAgentLimits, { account_id: key.account_id, agent_steps_per_minute: 100_000 }, { timeoutMs: 15_000 }));
    const headers = { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' };
    const agent = await retry(log, 'agent', async () => {
      const r = await fetch(`${gateways[0].url}/v1/agents`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `chaos-${i}`, model: MODEL, tools: ['sandbox.execute'], limits: { step_limit: 6, budget_usd: 1 } }),
      });
      if (!r.ok) throw new Error(`POST /v1/agents: ${r.status} ${await r.text()}`);
      return r.json();
    });
    accounts.push({ ...key, headers, agentId: agent.id, session: `chaos-s${i}` });
  }
  log('accounts funded', { accounts: accounts.length });

  return { prefix, nats, redis, model, breach, pages, replicas, gateways, accounts, agentDb, billingDb, rpc };
}
