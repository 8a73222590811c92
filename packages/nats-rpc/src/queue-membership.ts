import type { Logger } from '@drael/logger';
import type { DrainingNatsServer } from './draining-nats.server.js';
import { runHealthChecks, type HealthCheck } from './health-checks.js';
import { inFlight } from './in-flight.js';

export interface QueueMembershipOptions {
  /** How often the critical checks run. */
  intervalMs: number;
  /** Failed rounds in a row before the replica leaves: one slow answer is not an outage. */
  failuresToLeave: number;
}

/**
 * Keeps a replica in its service's queue group only while its critical dependencies answer (the
 * service's HEALTH_CHECKS): one that cannot do the work (a sandbox whose container engine is gone)
 * leaves, so NATS gives every request to the replicas that can, and rejoins at the first round
 * that passes. Without it, a queue group routes to a broken replica as often as to a healthy one
 * (the multi-replica pass's F2: 8 to 11 of 12 runs failed with one of two sandbox engines down),
 * and a health request answered by it made the whole service look down to the gateways. A replica
 * leaves only with nothing in flight, so no caller waiting on it is told its replica was lost.
 * The last replica standing leaves too: callers are then told at once that nobody answers.
 */
export function keepQueueMembershipHealthy(server: DrainingNatsServer, checks: readonly HealthCheck[], logger: Logger, options: QueueMembershipOptions): { stop(): void } {
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    const health = await runHealthChecks(checks);
    if (stopped) return;
    if (health.ok) {
      failures = 0;
      if (!server.inQueueGroup) {
        await server.rejoinQueueGroup();
        logger.info({ checks: health.checks }, 'dependencies answer again: rejoined the queue group');
      }
      return;
    }
    failures++;
    if (server.inQueueGroup && failures >= options.failuresToLeave && inFlight.size === 0) {
      await server.leaveQueueGroup();
      logger.warn({ failing: health.failing, checks: health.checks }, 'a critical dependency does not answer: left the queue group until it does');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round()
        .catch((err: unknown) => logger.error({ err }, 'queue membership check failed'))
        .finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
