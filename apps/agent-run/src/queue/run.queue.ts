import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DelayedError, Queue, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { createLogger, type Logger } from '@drael/logger';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { recordHeldBack, watchRuns } from '../agent-run.metrics.js';

export const QUEUE_NAME = 'agent-runs';

/** The longest creating a run waits for its job to be added (enqueueSoon). */
const ENQUEUE_WAIT_MS = 1_000;

/** The first wait of a run held back by its account's cap; each further one doubles, up to AGENT_RUN_ACCOUNT_RETRY_MAX_MS. */
const FIRST_RETRY_MS = 250;

export interface RunJob {
  run_id: string;
  /** How many times the run was held back by its account's cap (AGENT_RUN_ACCOUNT_CONCURRENCY). */
  deferrals?: number;
}

/**
 * What the worker's processor answers for a run: `account_busy` puts the job back, delayed;
 * `requeued` (the run is queued again, to be resumed) puts it back to be taken at once by any worker.
 */
export type ProcessorResult = 'account_busy' | 'requeued' | (string & {});

/** How soon a requeued run's job is offered again: at once, give or take, to whichever worker is free. */
const REQUEUED_DELAY_MS = 50;

/**
 * How long a run held back `deferrals` times waits before it asks again: doubling from
 * FIRST_RETRY_MS up to `maxMs`, with jitter so one account's held runs do not ask together.
 */
export function retryDelayMs(deferrals: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, FIRST_RETRY_MS * 2 ** Math.min(20, Math.max(0, deferrals - 1)));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * BullMQ's connection from a Redis URL, keeping what the URL says: `rediss://` turns TLS on
 * (the server name checked against the certificate), `user:pass@` is an ACL user (Redis 6+).
 */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`REDIS_URL must be redis:// or rediss://, not ${u.protocol}`);
  return {
    host: u.hostname,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: { servername: u.hostname } } : {}),
    ...(u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    // BullMQ workers block on Redis; retries per request must be unlimited.
    maxRetriesPerRequest: null,
  };
}

/**
 * The BullMQ queue of runs: agent-run's alone (the gateway never touches Redis for runs). A job
 * only says "run R is waiting"; whether it runs is decided by the database claim, so a job
 * delivered twice, redelivered after a stall, or submitted twice executes the run at most once.
 */
@Injectable()
export class RunQueue implements OnApplicationShutdown {
  private readonly queue: Queue<RunJob>;
  private worker?: Worker<RunJob>;
  private readonly log: Logger;

  constructor(@Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig) {
    this.queue = new Queue<RunJob>(QUEUE_NAME, { connection: redisConnection(config.REDIS_URL), prefix: config.AGENT_RUN_QUEUE_PREFIX });
    this.log = createLogger('agent-run', config.LOG_LEVEL).child({ component: 'run-queue' });
    watchRuns({ queue: () => this.queue.getJobCounts('waiting', 'active', 'delayed') });
  }

  async enqueue(runId: string): Promise<void> {
    // jobId = run id: BullMQ drops a second add of the same run while the first is kept.
    await this.queue.add('run', { run_id: runId }, { jobId: runId, attempts: 3, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: 1000, removeOnFail: 1000 });
  }

  /**
   * Adds a new run's job, waiting for it at most ENQUEUE_WAIT_MS: a run is created whether Redis
   * answers now or not. With Redis away, the add waits in the connection's offline queue (it is
   * sent when Redis is back) and the reconciler gives the run a job anyway (ensureJob); the job
   * id is the run id and the database claim lets it run once. So the caller gets its run, queued,
   * at once, and never a timeout that hides a run it created (a client retrying on it would create
   * one paid run per attempt).
   */
  async enqueueSoon(runId: string): Promise<void> {
    const added = this.enqueue(runId).then(
      () => true,
      (err: unknown) => {
        this.log.warn({ err, run_id: runId }, "adding a run's job failed; the reconciler adds it");
        return false;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ENQUEUE_WAIT_MS);
      timer.unref();
    });
    const done = await Promise.race([added, waited]);
    clearTimeout(timer);
    if (!done) this.log.warn({ run_id: runId }, 'run created while Redis is not answering: its job is added when Redis is back');
  }

  /**
   * Makes sure a queued run has a job that will be delivered: none (Redis lost it: a restart
   * without persistence, an eviction, a crash between the row and the add), or one that already
   * ended (a job that failed its attempts while the database was away) is replaced. Safe to call
   * for any queued run, any number of times, from any replica: the job id is the run id and the
   * database claim lets the run execute once. True when a job was added.
   */
  async ensureJob(runId: string): Promise<boolean> {
    const job = await this.queue.getJob(runId);
    if (job) {
      const state = await job.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
      // An ended job keeps its id (removeOnComplete/Fail keep the last 1000): it would swallow the add.
      await job.remove();
    }
    await this.enqueue(runId);
    return true;
  }

  /** Health: the queue's Redis answers PING. */
  async ping(): Promise<void> {
    const client = await this.queue.getBackend().client;
    // Not queued while disconnected (the queue's connection retries forever): say so at once.
    if (client.status !== 'ready') throw new Error(`redis connection ${client.status}`);
    await client.runCommand('ping', []);
  }

  /**
   * Starts taking jobs; the processor decides (through the database) whether the run executes here.
   * A run its account's cap holds back stays queued: its job is moved to delayed (no attempt used,
   * never dropped) and taken again after retryDelayMs, so the worker's slots go to other accounts'
   * runs meanwhile instead of waiting or spinning.
   */
  startWorker(processor: (runId: string) => Promise<ProcessorResult>): void {
    this.worker = new Worker<RunJob>(
      QUEUE_NAME,
      async (job: Job<RunJob>, token?: string) => {
        const result = await processor(job.data.run_id);
        if (result === 'requeued') {
          // A job that completed would keep the run's job id and swallow the next add: moved instead.
          await job.moveToDelayed(Date.now() + REQUEUED_DELAY_MS, token);
          throw new DelayedError();
        }
        if (result !== 'account_busy') return result;
        recordHeldBack();
        const deferrals = (job.data.deferrals ?? 0) + 1;
        await job.updateData({ ...job.data, deferrals });
        await job.moveToDelayed(Date.now() + retryDelayMs(deferrals, this.config.AGENT_RUN_ACCOUNT_RETRY_MAX_MS), token);
        // BullMQ's way to say "moved, not done": the job is neither completed nor failed.
        throw new DelayedError();
      },
      {
        connection: redisConnection(this.config.REDIS_URL),
        prefix: this.config.AGENT_RUN_QUEUE_PREFIX,
        concurrency: this.config.AGENT_RUN_CONCURRENCY,
        // A job whose worker stops renewing its lock is handed to another worker, which finds the
        // run's database lease lapsed and ends it (never runs it again).
        lockDuration: this.config.AGENT_RUN_LEASE_MS,
        stalledInterval: this.config.AGENT_RUN_LEASE_MS,
        maxStalledCount: 1,
      },
    );
    this.worker.on('failed', (job, err) => this.log.error({ err, run_id: job?.data.run_id }, 'run job failed'));
    this.worker.on('error', (err) => this.log.error({ err }, 'run worker error'));
  }

  /** Stops taking new jobs and waits for the ones in progress. */
  async closeWorker(): Promise<void> {
    await this.worker?.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.closeWorker();
    await this.queue.close();
  }
}
