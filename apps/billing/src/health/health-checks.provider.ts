import type { Provider } from '@nestjs/common';
import { HEALTH_CHECKS, type HealthCheck } from '@drael/nats-rpc';
import { PrismaService } from '../db/prisma.service.js';

/** billing's dependency: its Postgres (every key check, hold and receipt is a row there). */
export const billingHealthChecks: Provider = {
  provide: HEALTH_CHECKS,
  inject: [PrismaService],
  useFactory: (db: PrismaService): HealthCheck[] => [{ name: 'postgres', check: () => db.ping() }],
};
