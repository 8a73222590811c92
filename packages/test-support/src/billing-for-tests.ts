import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { billingCatalog, type ToolLevel } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { startServiceProcess, type ServiceProcess } from './service-process.js';

const repoRoot = resolve(new URL('../../..', import.meta.url).pathname);
const run = promisify(execFile);

/**
 * Where tests' billing keeps its rows: one schema shared by every test run of the same migrations,
 * migrated with the same deploy command bring-up uses. Tests stay apart by account (each test makes
 * its own). The schema's name carries a hash of billing's migrations, so a checkout with other
 * migrations (another branch, a migration since edited) gets a schema of its own instead of
 * failing on one that a different migration history left behind.
 */
export function testBillingDatabaseUrl(): string {
  const u = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael');
  u.searchParams.set('schema', `billing_shared_tests_${migrationsHash()}`);
  return u.toString();
}

let hash: string | undefined;
function migrationsHash(): string {
  if (hash) return hash;
  const dir = resolve(repoRoot, 'apps/billing/prisma/migrations');
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) {
    if (name.endsWith('.toml')) continue;
    h.update(name).update(readFileSync(resolve(dir, name, 'migration.sql')));
  }
  hash = h.digest('hex').slice(0, 12);
  return hash;
}

let migrated: Promise<void> | undefined;
function migrateOnce(databaseUrl: string): Promise<void> {
  migrated ??= run(process.execPath, [resolve(repoRoot, 'packages/db-migrate/dist/cli.js'), 'deploy'], {
    cwd: resolve(repoRoot, 'apps/billing'),
    env: { ...process.env, DATABASE_URL: databaseUrl },
  }).then(
    () => undefined,
    (err: unknown) => {
      migrated = undefined;
      throw err;
    },
  );
  return migrated;
}

/**
 * Starts the real billing service (apps/billing/dist/main.js) on this NATS prefix, for tests of
 * other apps that need API keys (every /v1 and /api route of the gateway does).
 */
export async function startBillingForTests(env: { NATS_URL?: string; DRAEL_NATS_PREFIX?: string }, extraEnv: Record<string, string> = {}): Promise<ServiceProcess> {
  const databaseUrl = testBillingDatabaseUrl();
  await migrateOnce(databaseUrl);
  return startServiceProcess('billing', {
    NATS_URL: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    DRAEL_NATS_PREFIX: env.DRAEL_NATS_PREFIX ?? '',
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  });
}

export interface TestKeyOptions {
  tool_level?: ToolLevel;
  plan?: string;
  /** Generous by default, so ordinary tests never meet a 429. */
  rate_limit?: { per_minute: number; per_hour: number };
  extra_usage?: { enabled: boolean; daily_ceiling: number };
}

export interface TestKey {
  api_key: string;
  key_id: string;
  account_id: string;
}

/** A new account with one API key, through billing's own subjects. */
export async function createTestKey(client: NatsRpcClient, options: TestKeyOptions = {}): Promise<TestKey> {
  const account = await client.request(
    billingCatalog.createAccount,
    { name: `test-${Date.now()}`, plan: options.plan ?? 'pro', ...(options.extra_usage ? { extra_usage: options.extra_usage } : {}) },
    { timeoutMs: 15_000 },
  );
  const key = await client.request(
    billingCatalog.createKey,
    {
      account_id: account.account_id,
      tool_level: options.tool_level ?? 'l4_browser',
      rate_limit: options.rate_limit ?? { per_minute: 1_000_000, per_hour: 10_000_000 },
    },
    { timeoutMs: 15_000 },
  );
  return { api_key: key.api_key, key_id: key.key_id, account_id: account.account_id };
}
