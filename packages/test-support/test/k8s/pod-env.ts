/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are plain YAML objects probed field by field */
import { randomBytes } from 'node:crypto';
import { testBillingDatabaseUrl } from '../../src/index.js';
import type { Manifest } from './manifest-policy.js';

// The environment a pod's container gets from the rendered manifests, for the tests that boot the
// apps as their pods run them: from the source tree (pod-boot.spec.ts) and from the built images
// (image-boot.spec.ts). Secrets get test values for their documented keys (k8s/README.md), what
// an operator would create; addresses that exist only inside a cluster are made this machine's.

interface LocalAddresses {
  natsUrl: string;
  searxngUrl: string;
  redisUrl: string;
  /** DRAEL_NATS_PREFIX: keeps parallel runs' subjects and buckets apart. */
  prefix: string;
}

export function localAddresses(prefix: string): LocalAddresses {
  return {
    natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    searxngUrl: process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890',
    prefix,
  };
}

/** agent-run's schema in the boot tests (billing uses the tests' shared, migrated one). */
function agentRunBootDatabaseUrl(): string {
  const u = new URL(testBillingDatabaseUrl());
  u.searchParams.set('schema', 'agent_run_boot_tests');
  return u.toString();
}

/** Test values for every documented Secret key (k8s/README.md). */
function secretValue(name: string, key: string, local: LocalAddresses): string {
  const values: Record<string, string> = {
    'drael-models.DRAEL_MODELS': '{}',
    'drael-database.BILLING_DATABASE_URL': testBillingDatabaseUrl(),
    'drael-database.AGENT_RUN_DATABASE_URL': agentRunBootDatabaseUrl(),
    // The migration Jobs' owner role: the same database here (one trusted local role).
    'drael-migrate.BILLING_MIGRATE_DATABASE_URL': testBillingDatabaseUrl(),
    'drael-migrate.AGENT_RUN_MIGRATE_DATABASE_URL': agentRunBootDatabaseUrl(),
    'drael-redis.CACHE_REDIS_URL': local.redisUrl,
    'drael-redis.QUEUE_REDIS_URL': local.redisUrl,
    'drael-agent-run-keys.AGENT_RUN_DATA_KEYS': `k1:${randomBytes(32).toString('base64')}`,
    'drael-agent-run-keys.AGENT_RUN_DATA_KEY_ACTIVE': 'k1',
    'drael-billing-keys.BILLING_RECEIPT_KEY': randomBytes(32).toString('hex'),
    'drael-billing-keys.BILLING_RECEIPT_KEY_ID': 'k1',
  };
  const v = values[`${name}.${key}`];
  if (v === undefined) throw new Error(`no test value for Secret ${name}.${key}`);
  return v;
}

/** The keys of the Secrets that pods take whole (envFrom). */
const SECRET_KEYS: Record<string, string[]> = {
  'drael-agent-run-keys': ['AGENT_RUN_DATA_KEYS', 'AGENT_RUN_DATA_KEY_ACTIVE'],
  'drael-billing-keys': ['BILLING_RECEIPT_KEY', 'BILLING_RECEIPT_KEY_ID'],
};

const configMap = (ms: Manifest[], namespace: string, name: string): Record<string, string> =>
  ms.find((m: Manifest) => m.kind === 'ConfigMap' && m.metadata.name === name && m.metadata.namespace === namespace)!.data;

/**
 * The container's environment as the kubelet builds it (envFrom first, then env), with cluster
 * names made local. `owner` is the Deployment or Job whose pod template holds the container.
 */
export function podEnv(ms: Manifest[], owner: Manifest, container: any, local: LocalAddresses): Record<string, string> {
  const ns = owner.metadata.namespace;
  const env: Record<string, string> = {};
  for (const ef of container.envFrom ?? []) {
    if (ef.configMapRef) Object.assign(env, configMap(ms, ns, ef.configMapRef.name));
    if (ef.secretRef) for (const k of SECRET_KEYS[ef.secretRef.name] ?? []) env[k] = secretValue(ef.secretRef.name, k, local);
  }
  for (const e of container.env ?? []) {
    if ('value' in e) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = secretValue(e.valueFrom.secretKeyRef.name, e.valueFrom.secretKeyRef.key, local);
    else if (e.valueFrom?.configMapKeyRef) env[e.name] = configMap(ms, ns, e.valueFrom.configMapKeyRef.name)[e.valueFrom.configMapKeyRef.key]!;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = `${owner.metadata.name}-boot-${local.prefix.slice(-8)}`;
  }
  if (env.NATS_URL) env.NATS_URL = local.natsUrl;
  env.DRAEL_NATS_PREFIX = local.prefix;
  if (env.SEARXNG_URL) env.SEARXNG_URL = local.searxngUrl;
  return env;
}
