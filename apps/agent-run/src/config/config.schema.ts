import { z } from 'zod';
import { baseEnvShape, databaseTimeoutsEnvShape, envInt } from '@drael/config';

/** USD per million tokens for a model alias; '*' is the price of every alias not listed. */
const PricesSchema = z.record(z.string(), z.object({ input_per_mtok_usd: z.number().nonnegative(), output_per_mtok_usd: z.number().positive() }));

export const configSchema = z
  .object({
    ...baseEnvShape,
    DATABASE_URL: z.string().startsWith('postgres').default('postgresql://postgres@127.0.0.1:5432/drael?schema=agent_run'),
    DATABASE_POOL_SIZE: envInt(1, 100).default(10),
    // Connect and statement timeouts (packages/config: databaseTimeoutsEnvShape).
    ...databaseTimeoutsEnvShape,
    REDIS_URL: z.string().startsWith('redis').default('redis://127.0.0.1:6379'),
    // Namespaces the BullMQ keys, so several installations (or parallel test runs) share one Redis.
    AGENT_RUN_QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_:-]+$/)
      .default('drael'),
    // Runs one replica executes at once (its BullMQ worker's concurrency).
    AGENT_RUN_CONCURRENCY: envInt(1, 200).default(10),
    // Runs of one account executing at once over every replica, so no account holds the whole
    // executor (attack report F3): the claim counts them in the database. Unset: half of
    // AGENT_RUN_CONCURRENCY, at least 1. A run over it stays queued and tries again later.
    AGENT_RUN_ACCOUNT_CONCURRENCY: envInt(1, 10_000).optional(),
    // Runs of one account waiting (`queued`) at most; past it POST /v1/agents/{id}/runs is 429 too_many_queued_runs.
    AGENT_RUN_ACCOUNT_MAX_QUEUED: envInt(1, 1_000_000).default(100),
    // Live (not deleted) agents of one account at most; past it POST /v1/agents is 429 quota_exceeded
    // (attack report 4, F1: agents were free, unbounded storage). A deleted agent no run refers to
    // is removed; one its runs still name is kept for them and does not count.
    AGENT_RUN_ACCOUNT_MAX_AGENTS: envInt(1, 1_000_000).default(1_000),
    // The longest a run held back by its account's cap waits before it asks again (its waits grow
    // from a quarter second to this), so a full account's queue is not a busy loop on the database.
    AGENT_RUN_ACCOUNT_RETRY_MAX_MS: envInt(100, 60_000).default(5_000),
    // Receipts are signed by billing (BILLING_RECEIPT_KEY), which settles each step's money.
    // AES-256-GCM data keys for encryption at rest: "id:base64key,id2:base64key"; new values use the active one.
    AGENT_RUN_DATA_KEYS: z.string().min(1),
    AGENT_RUN_DATA_KEY_ACTIVE: z.string().min(1),
    // spec 03: a run stops after 10 minutes of wall-clock time (shorter only in tests).
    AGENT_RUN_WALL_CLOCK_MS: envInt(100, 10 * 60_000).default(10 * 60_000),
    // How long a claim holds without a heartbeat; a worker that misses it can write nothing more.
    AGENT_RUN_LEASE_MS: envInt(200, 600_000).default(30_000),
    // The reconciler: every AGENT_RUN_RECONCILE_MS, each replica gives a job to every run still
    // `queued` AGENT_RUN_RECONCILE_AFTER_MS after its creation whose job Redis lost (issue 19).
    AGENT_RUN_RECONCILE_MS: envInt(100, 3_600_000).default(30_000),
    AGENT_RUN_RECONCILE_AFTER_MS: envInt(0, 3_600_000).default(10_000),
    // On SIGTERM, runs in progress get this long to finish; then each is taken back to `queued`
    // and another replica resumes it from its last step (failed, past AGENT_RUN_MAX_RESUMES).
    AGENT_RUN_DRAIN_MS: envInt(0, 600_000).default(20_000),
    // How many times one run is resumed from its last step after its worker stopped (a rollout's
    // SIGTERM past the drain) or vanished (a lapsed lease); past it the run ends failed
    // (`interrupted`, `worker_lost`). 0: never resumed. Bounds a run that brings its worker down.
    AGENT_RUN_MAX_RESUMES: envInt(0, 100).default(3),
    // How often a worker asks the database whether a run it executes was cancelled (a cancel that
    // another replica answered): the operation in flight is stopped within this.
    AGENT_RUN_CANCEL_POLL_MS: envInt(50, 60_000).default(1_000),
    // Retention: a run that ended more than this many days ago is removed with its steps, receipts
    // and events, and so is a deleted agent that only such runs still named (kept for them until
    // then). Each replica sweeps every AGENT_RUN_RETENTION_SWEEP_MS, AGENT_RUN_RETENTION_BATCH runs
    // per transaction. 0 keeps every run forever (the database then grows with every run made).
    AGENT_RUN_RETENTION_DAYS: envInt(0, 36_500).default(90),
    AGENT_RUN_RETENTION_SWEEP_MS: envInt(1_000, 86_400_000).default(3_600_000),
    AGENT_RUN_RETENTION_BATCH: envInt(1, 10_000).default(500),
    AGENT_RUN_MAX_OUTPUT_TOKENS: envInt(64, 1_000_000).default(4096),
    // A model call that fails retryably (timeout, 429, 5xx: before any output, the call is not
    // streamed) is tried again this many times, backing off from the base delay, before the run fails.
    AGENT_RUN_INFERENCE_RETRIES: envInt(0, 10).default(2),
    AGENT_RUN_INFERENCE_RETRY_BASE_MS: envInt(1, 60_000).default(250),
    // While no gateway serving a run's model alias answers (all restarting, a rolling update), its
    // model call is asked again, backing off up to 2 s, for this long before the run fails
    // model_not_found. Counted apart from AGENT_RUN_INFERENCE_RETRIES.
    AGENT_RUN_INFERENCE_UNSERVED_WAIT_MS: envInt(0, 600_000).default(30_000),
    AGENT_RUN_MODEL_PRICES: z
      .string()
      .default('{"*":{"input_per_mtok_usd":1,"output_per_mtok_usd":4}}')
      .transform((s, ctx) => {
        try {
          return PricesSchema.parse(JSON.parse(s));
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `not a price table: ${(err as Error).message}` });
          return z.NEVER;
        }
      }),
    // A sandbox execution is reserved at its full timeout times this price (spec 03).
    AGENT_RUN_SANDBOX_USD_PER_SECOND: z.coerce.number().nonnegative().default(0.0001),
  })
  .transform((c) => ({ ...c, AGENT_RUN_ACCOUNT_CONCURRENCY: c.AGENT_RUN_ACCOUNT_CONCURRENCY ?? Math.max(1, Math.floor(c.AGENT_RUN_CONCURRENCY / 2)) }));
export type AgentRunConfig = z.output<typeof configSchema>;
export const AGENT_RUN_CONFIG = Symbol('AGENT_RUN_CONFIG');
