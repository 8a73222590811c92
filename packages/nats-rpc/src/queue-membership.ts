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
 * What else a replica gives up while out of its queue group, and takes back on rejoining (named
 * by the service's boot options, `queueMembership.listener`): the sandbox's session placement (the
 * sessions this replica holds would otherwise still be routed to it, and fail, until its engine
 * came back).
 */
export interface QueueMembershipListener {
  /** Called as the replica leaves the queue group, before it does; a failure is logged, it leaves all the same. */
  leaving(): Promise<void>;
  /** Called before the replica rejoins: what it gave up is taken back first. */
  rejoining(): Promise<void>;
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
export function keepQueueMembershipHealthy(
  server: DrainingNatsServer,
  checks: readonly HealthCheck[],
  logger: Logger,
  options: QueueMembershipOptions,
  listener?: QueueMembershipListener,
): { stop(): void } {
  let failures = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    const health = await runHealthChecks(checks);
    if (stopped) return;
    if (health.ok) {
      failures = 0;
      if (!server.inQueueGroup) {
        await listener?.rejoining();
        await server.rejoinQueueGroup();
        logger.info({ checks: health.checks }, 'dependencies answer again: rejoined the queue group');
      }
      return;
    }
    failures++;
    if (server.inQueueGroup && failures >= options.failuresToLeave && inFlight.size === 0) {
      // What it holds is given up first: once it is seen out of the group, its sessions are the others'.
      await listener?.leaving().catch((err: unknown) => logger.error({ err }, 'giving up what this replica holds failed'));
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
