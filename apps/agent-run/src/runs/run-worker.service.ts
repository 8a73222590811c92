import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createLogger, type Logger } from '@drael/logger';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { RunExecutor } from '../loop/run-executor.js';
import { RunQueue } from '../queue/run.queue.js';
import { RunRepository } from './run.repository.js';

/**
 * Wires the queue to the executor, sweeps runs whose worker vanished, gives a job back to queued
 * runs whose job Redis lost (the reconciler), and shuts down gracefully: no new jobs, runs in
 * progress get AGENT_RUN_DRAIN_MS to finish, then are stopped and queued again for another
 * replica to resume (ended failed past AGENT_RUN_MAX_RESUMES) rather than left for a reaper.
 */
@Injectable()
export class RunWorkerService implements OnApplicationBootstrap, OnModuleDestroy {
  private sweeper?: NodeJS.Timeout;
  private reconciler?: NodeJS.Timeout;
  private reconciling = false;
  private draining?: Promise<void>;
  private readonly log: Logger;

  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly queue: RunQueue,
    private readonly executor: RunExecutor,
    private readonly runs: RunRepository,
  ) {
    this.log = createLogger('agent-run', config.LOG_LEVEL).child({ component: 'run-worker' });
  }

  onApplicationBootstrap(): void {
    this.queue.startWorker((runId) => this.executor.execute(runId));
    this.sweeper = setInterval(() => void this.sweep(), this.config.AGENT_RUN_LEASE_MS);
    this.reconciler = setInterval(() => void this.reconcile(), this.config.AGENT_RUN_RECONCILE_MS);
  }

  /**
   * Runs whose worker vanished: each is resumed by any worker (its job made sure of at once, rather
   * than at the next reconcile) or, past its resumes, ended.
   */
  private async sweep(): Promise<void> {
    try {
      const { reaped, requeued } = await this.executor.reapExpired();
      if (reaped > 0) this.log.warn({ reaped }, 'ended runs whose worker was lost');
      for (const id of requeued) await this.queue.ensureJob(id);
    } catch (err) {
      this.log.warn({ err }, 'sweep failed');
    }
  }

  /**
   * Queued runs whose job is gone get one again. Without this a run whose job Redis lost stays
   * `queued` forever. One pass at a time per replica; a pass that fails (Redis or Postgres down)
   * is logged and the next interval tries again.
   */
  async reconcile(): Promise<number> {
    if (this.reconciling) return 0;
    this.reconciling = true;
    let requeued = 0;
    try {
      for (const { id } of await this.runs.queuedSince(this.config.AGENT_RUN_RECONCILE_AFTER_MS)) {
        if (await this.queue.ensureJob(id)) {
          requeued++;
          this.log.warn({ run_id: id }, 'queued run had no job: enqueued again');
        }
      }
    } catch (err) {
      this.log.warn({ err }, 'reconcile failed');
    } finally {
      this.reconciling = false;
    }
    return requeued;
  }

  // A destroy hook, so it runs before the database, NATS and the queue close (shutdown hooks).
  onModuleDestroy(): Promise<void> {
    return this.drain();
  }

  /**
   * Takes no new job and lets the runs in progress finish (stopped past AGENT_RUN_DRAIN_MS). Once:
   * main.ts calls it while the service still answers its subjects, the destroy hook again.
   */
  drain(): Promise<void> {
    return (this.draining ??= this.drainOnce());
  }

  private async drainOnce(): Promise<void> {
    clearInterval(this.sweeper);
    clearInterval(this.reconciler);
    const drain = setTimeout(() => this.executor.abortAll(), this.config.AGENT_RUN_DRAIN_MS);
    try {
      await this.queue.closeWorker();
      // Whatever BullMQ reports, no run may be left running by this process.
      await this.executor.idle();
    } finally {
      clearTimeout(drain);
    }
  }
}
