import { z } from 'zod';
import { TRACES_SAMPLERS, type TracesSampler } from '@drael/tracing';

/** A configuration error names every bad variable, so boot stops with a message an operator can act on. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once, at boot. Nothing else in an app reads process.env. */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
}

/**
 * How a client proves itself to NATS and checks the server (issue 17; k8s/README.md "NATS"):
 * one of a .creds file (user JWT + nkey seed, decentralized auth), an nkey seed file, a token or
 * a user and password; TLS with the CA that signed the server's certificate, and a client
 * certificate and key where the server verifies clients (mutual TLS). Every NATS client of every
 * app reads these (packages/nats-rpc natsConnectOptions); none set: plain nats:// as in local bring-up.
 */
export const natsSecurityEnvShape = {
  NATS_CREDS_FILE: z.string().min(1).optional(),
  NATS_NKEY_SEED_FILE: z.string().min(1).optional(),
  NATS_TOKEN: z.string().min(1).optional(),
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
  NATS_TLS_CERT_FILE: z.string().min(1).optional(),
  NATS_TLS_KEY_FILE: z.string().min(1).optional(),
};
export const natsSecurityEnv = z.object(natsSecurityEnvShape);
export type NatsSecurityEnv = z.output<typeof natsSecurityEnv>;

/** Variables every service shares: where NATS is, how subjects are namespaced, how much to log. */
export const baseEnvShape = {
  ...natsSecurityEnvShape,
  NATS_URL: z
    .string()
    .regex(/^(nats|tls|ws|wss):\/\/[^\s]+$/, 'must be a nats:// URL')
    .default('nats://127.0.0.1:4222'),
  // Lets several Drael installations (or parallel test runs) share one NATS cluster.
  DRAEL_NATS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/, 'letters, digits, _ and - only')
    .default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // A NATS-only service's HTTP health port (GET /healthz, /readyz) for Kubernetes httpGet probes;
  // unset: none (several services share one machine in local bring-up). The gateway ignores it.
  HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  // Prometheus metrics (docs/operations.md): on by default; off, nothing is recorded.
  METRICS_ENABLED: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  // Tracing (docs/operations.md "Tracing"): the OTLP/HTTP collector's base URL, spans going to
  // <url>/v1/traces. Unset or empty (OpenTelemetry's own rule): tracing is off and costs nothing.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess((v) => (v === '' ? undefined : v), z.url({ protocol: /^https?$/ }).optional()),
  // OpenTelemetry's batch delay: finished spans are sent at least this often (ms).
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(600_000).default(5000),
  // OpenTelemetry's sampler variables, with their meaning (docs/operations.md "Sampling"). Unlike
  // the SDK, which falls back to its default on a name it does not know, a typo stops boot: a
  // misspelt sampler would otherwise record every trace the operator meant to thin out.
  OTEL_TRACES_SAMPLER: z.preprocess((v) => (v === '' ? undefined : v), z.enum(TRACES_SAMPLERS).default('parentbased_always_on')),
  // The ratio of the *traceidratio samplers, 0..1 (unset: 1).
  OTEL_TRACES_SAMPLER_ARG: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().min(0).max(1).optional()),
};

/** The tracing settings of a parsed base configuration, as @drael/tracing's startTracing takes them. */
export function tracingOf(config: {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_BSP_SCHEDULE_DELAY: number;
  OTEL_TRACES_SAMPLER: TracesSampler['name'];
  OTEL_TRACES_SAMPLER_ARG?: number | undefined;
}): {
  endpoint: string | undefined;
  scheduleDelayMs: number;
  sampler: TracesSampler;
} {
  return {
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    scheduleDelayMs: config.OTEL_BSP_SCHEDULE_DELAY,
    sampler: { name: config.OTEL_TRACES_SAMPLER, ratio: config.OTEL_TRACES_SAMPLER_ARG },
  };
}

/** Strict boolean variables: "true"/"false"/"1"/"0" only, so a typo never silently means false. */
export const envBoolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const envInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A comma-separated list: each item trimmed, empty items dropped (unset or blank: the fallback's items, or none). */
export const envList = (fallback = '') =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    );

/** A variable holding JSON, parsed and then validated by `schema` (e.g. model aliases, provider settings). */
export const envJson = <S extends z.ZodType>(schema: S) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

/**
 * A service's Postgres bounds (issue 19, item 4): without them a partitioned or frozen server
 * holds every query, and every caller behind it, forever. Each service with a database spreads
 * this into its schema and hands `postgresTimeouts(config)` to its pg pool.
 */
export const databaseTimeoutsEnvShape = {
  // Opening a connection (TCP, TLS, authentication) takes at most this.
  DATABASE_CONNECT_TIMEOUT_MS: envInt(100, 120_000).default(5_000),
  // One statement runs at most this long on the server (statement_timeout); the client gives up
  // a little later (query_timeout) when the server is not there to say so.
  DATABASE_STATEMENT_TIMEOUT_MS: envInt(100, 3_600_000).default(15_000),
};

/** What the client waits beyond the server's own statement timeout before it stops waiting for the answer. */
const CLIENT_SIDE_GRACE_MS = 1_000;

/**
 * Prisma's bounds of an interactive transaction (`$transaction(async (tx) => ...)`) from the same
 * settings. Its own defaults (2 s to get a connection and begin, 5 s for the whole body) are far
 * under them: a burst that queued on a lock or on the pool failed as a defect (`internal`) while a
 * plain query would still have waited its turn. Now a transaction waits for a connection as long
 * as a query does, and may run as long as one statement may.
 */
export function prismaTransactionOptions(config: { DATABASE_CONNECT_TIMEOUT_MS: number; DATABASE_STATEMENT_TIMEOUT_MS: number }) {
  return { maxWait: config.DATABASE_CONNECT_TIMEOUT_MS, timeout: config.DATABASE_STATEMENT_TIMEOUT_MS + CLIENT_SIDE_GRACE_MS };
}

/** node-postgres pool settings for those bounds (a plain object: this package depends on zod only). */
export function postgresTimeouts(config: { DATABASE_CONNECT_TIMEOUT_MS: number; DATABASE_STATEMENT_TIMEOUT_MS: number }) {
  return {
    connectionTimeoutMillis: config.DATABASE_CONNECT_TIMEOUT_MS,
    statement_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS,
    query_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS + CLIENT_SIDE_GRACE_MS,
    // A transaction left open by a crashed step releases its locks.
    idle_in_transaction_session_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS * 2,
    // A peer that vanished without a FIN is noticed on idle connections too.
    keepAlive: true,
  };
}
