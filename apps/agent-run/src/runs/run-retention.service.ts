import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { createLogger, type Logger } from '@drael/logger';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { recordRetention, recordRetentionSweep } from '../agent-run.metrics.js';
import { RunRepository } from './run.repository.js';

/**
 * Retention of ended runs (AGENT_RUN_RETENTION_DAYS): every replica sweeps on its own timer and
 * removes, a batch per transaction, the runs that ended longest ago with their steps, receipts and
 * events, and the deleted agents only those runs named. Replicas need no coordination: a batch
 * skips the rows another replica's batch holds. Without it the runs table, and with it the agents
 * kept for their runs, grow with every run ever made (agent-run README, "Retention").
 */
@Injectable()
export class RunRetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private first?: NodeJS.Timeout;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;
  private stopped = false;
  private readonly log: Logger;

  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly runs: RunRepository,
  ) {
    this.log = createLogger('agent-run', config.LOG_LEVEL).child({ component: 'retention' });
  }

  onApplicationBootstrap(): void {
    if (this.config.AGENT_RUN_RETENTION_DAYS === 0) return;
    const every = this.config.AGENT_RUN_RETENTION_SWEEP_MS;
    // The first sweep soon after boot, at a random point so a rollout's replicas do not all start
    // theirs in the same second; then every interval.
    this.first = setTimeout(() => this.sweepInBackground(), Math.random() * Math.min(every, 60_000));
    this.timer = setInterval(() => this.sweepInBackground(), every);
    this.first.unref();
    this.timer.unref();
  }

  /**
   * One sweep: batches until one comes back short (nothing older is left) or the service stops.
   * Resolves to what it removed. A failing batch (Postgres down) is logged; the next sweep retries.
   */
  async sweep(): Promise<{ runs: number; agents: number }> {
    const removed = { runs: 0, agents: 0 };
    const days = this.config.AGENT_RUN_RETENTION_DAYS;
    const batch = this.config.AGENT_RUN_RETENTION_BATCH;
    if (days === 0) return removed;
    try {
      while (!this.stopped) {
        const done = await this.runs.purgeEnded(days, batch);
        recordRetention(done);
        removed.runs += done.runs;
        removed.agents += done.agents;
        if (done.runs < batch) break;
      }
    } catch (err) {
      recordRetentionSweep('failed');
      this.log.warn({ err, removed }, 'retention sweep failed; the next one tries again');
      return removed;
    }
    recordRetentionSweep('ok');
    if (removed.runs > 0) this.log.info({ ...removed, older_than_days: days }, 'retention removed ended runs');
    return removed;
  }

  private sweepInBackground(): void {
    // One sweep at a time per replica: a slow one is not overlapped by the next tick.
    this.sweeping ??= this.sweep().finally(() => {
      this.sweeping = undefined;
    });
  }

  // A destroy hook, so a sweep in progress ends its batch before the database closes.
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.first);
    clearInterval(this.timer);
    await this.sweeping;
  }
}
