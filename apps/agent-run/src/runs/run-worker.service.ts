import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createLogger, type Logger } from '@drael/logger';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { RunExecutor } from '../loop/run-executor.js';
import { RunQueue } from '../queue/run.queue.js';

/**
 * Wires the queue to the executor, sweeps runs whose worker vanished, and shuts down gracefully:
 * no new jobs, runs in progress get AGENT_RUN_DRAIN_MS to finish, then are stopped (failed,
 * run end signed) rather than left for a reaper.
 */
@Injectable()
export class RunWorkerService implements OnApplicationBootstrap, OnModuleDestroy {
  private sweeper?: NodeJS.Timeout;
  private readonly log: Logger;

  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly queue: RunQueue,
    private readonly executor: RunExecutor,
  ) {
    this.log = createLogger('agent-run', config.LOG_LEVEL).child({ component: 'run-worker' });
  }

  onApplicationBootstrap(): void {
    this.queue.startWorker((runId) => this.executor.execute(runId));
    this.sweeper = setInterval(() => {
      this.executor.reapExpired().then(
        (n) => n > 0 && this.log.warn({ reaped: n }, 'ended runs whose worker was lost'),
        (err: unknown) => this.log.warn({ err }, 'sweep failed'),
      );
    }, this.config.AGENT_RUN_LEASE_MS);
  }

  // A destroy hook, so it runs before the database, NATS and the queue close (shutdown hooks).
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweeper);
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
