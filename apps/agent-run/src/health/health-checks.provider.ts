import type { Provider } from '@nestjs/common';
import { HEALTH_CHECKS, type HealthCheck } from '@drael/nats-rpc';
import { PrismaService } from '../db/prisma.service.js';
import { RunQueue } from '../queue/run.queue.js';

/** agent-run's dependencies: Postgres (agents, runs, steps) and the Redis its BullMQ queue lives in. */
export const agentRunHealthChecks: Provider = {
  provide: HEALTH_CHECKS,
  inject: [PrismaService, RunQueue],
  useFactory: (db: PrismaService, queue: RunQueue): HealthCheck[] => [
    { name: 'postgres', check: () => db.ping() },
    { name: 'redis', check: () => queue.ping() },
  ],
};
