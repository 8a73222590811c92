import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { billingCatalog } from '@drael/contracts';
import { deploy } from '@drael/db-migrate';
import { NatsRpcClient } from '@drael/nats-rpc';
import {
  cleanSandboxInstance,
  createTestKey,
  startBillingForTests,
  startGatewayProcess,
  startScriptedUpstream,
  startServiceProcess,
  testPrefix,
  type GatewayProcess,
  type ScriptedUpstream,
  type ServiceProcess,
  type TestKey,
} from '@drael/test-support';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const BASE_DB = process.env.DATABASE_URL?.split('?')[0] ?? 'postgresql://postgres@127.0.0.1:5432/drael';
export const ADMIN_TOKEN = `admin-${randomBytes(18).toString('hex')}`;
export const MODEL = 'gpt-test';

/** The whole product on one NATS prefix: gateway (serving the built console), billing, sandbox, agent-run, scripted upstream. */
export interface ConsoleStack {
  url: string;
  upstream: ScriptedUpstream;
  gateway: GatewayProcess;
  key: TestKey;
  nats: NatsRpcClient;
  stop(): Promise<void>;
}

export async function startConsoleStack(): Promise<ConsoleStack> {
  const prefix = testPrefix('console');
  const upstream = await startScriptedUpstream({ turns: [] });
  const services: ServiceProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const s of services) await s.stop('SIGKILL');
    for (const c of cleanups) await c();
    await upstream.close();
  };
  try {
    services.push(await startBillingForTests({ NATS_URL, DRAEL_NATS_PREFIX: prefix }, { BILLING_RECEIPT_KEY: randomBytes(32).toString('hex') }));

    const instance = `test-${prefix.slice(8)}`;
    const stateDir = `/var/lib/drael/sandbox-test/${instance}`;
    services.push(
      await startServiceProcess(
        'sandbox',
        { NATS_URL, DRAEL_NATS_PREFIX: prefix, SANDBOX_INSTANCE: instance, SANDBOX_STATE_DIR: stateDir, SANDBOX_MAX_CONCURRENT: '2', SANDBOX_WARM_POOL: '1' },
        { readyTimeoutMs: 90_000 },
      ),
    );
    cleanups.push(() => cleanSandboxInstance(instance, stateDir, prefix));

    // agent-run keeps its rows in a schema of these tests (accounts keep tests apart), migrated as bring-up does.
    const agentRunDb = `${BASE_DB}?schema=agent_run_console_tests`;
    const appDir = resolve(import.meta.dirname, '..', '..', 'agent-run');
    await deploy({ databaseUrl: agentRunDb, schemaPath: resolve(appDir, 'prisma/schema.prisma'), migrationsDir: resolve(appDir, 'prisma/migrations') });
    services.push(
      await startServiceProcess(
        'agent-run',
        {
          NATS_URL,
          DRAEL_NATS_PREFIX: prefix,
          DATABASE_URL: agentRunDb,
          DATABASE_POOL_SIZE: '4',
          REDIS_URL,
          AGENT_RUN_QUEUE_PREFIX: `drael-test:${prefix}`,
          AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`,
          AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
        },
        { readyTimeoutMs: 90_000 },
      ),
    );

    const gateway = await startGatewayProcess(
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
        // A revoked key is refused within this (the test waits it out).
        AUTH_CACHE_TTL_MS: '300',
        DRAEL_BACKEND_SERVICES: 'billing,sandbox,agent-run',
        DRAEL_MODELS: JSON.stringify({ [MODEL]: { base_url: upstream.baseUrl, model: 'upstream-model', input_per_1m: 1, output_per_1m: 2 } }),
      },
      { billing: false, readyTimeoutMs: 90_000 },
    );
    const nats = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    const key = await createTestKey(nats, { tool_level: 'l4_browser', plan: 'pro' });
    await nats.request(billingCatalog.creditWallet, { account_id: key.account_id, amount_micros: 5_000_000 }, { timeoutMs: 15_000 });
    await nats.request(billingCatalog.setAgentLimits, { account_id: key.account_id, agent_steps_per_minute: 100_000 }, { timeoutMs: 15_000 });
    // Warm billing's key check and agent-run's first queries before the browser counts on them.
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${gateway.url}/v1/agents`, { headers: { authorization: `Bearer ${key.api_key}` } }).catch(() => undefined);
      if (r?.status === 200) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    return {
      url: gateway.url,
      upstream,
      gateway,
      key,
      nats,
      stop: async () => {
        await gateway.stop();
        await nats.close();
        await stopAll();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
