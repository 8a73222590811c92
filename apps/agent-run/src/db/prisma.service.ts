import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { parseDatabaseUrl } from '@drael/db-migrate';
import { databaseTimeoutsEnvShape, postgresTimeouts, prismaTransactionOptions } from '@drael/config';
import { PrismaClient } from '../generated/prisma/client.js';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';

const DEFAULT_TIMEOUTS = {
  DATABASE_CONNECT_TIMEOUT_MS: databaseTimeoutsEnvShape.DATABASE_CONNECT_TIMEOUT_MS.parse(undefined),
  DATABASE_STATEMENT_TIMEOUT_MS: databaseTimeoutsEnvShape.DATABASE_STATEMENT_TIMEOUT_MS.parse(undefined),
};

/** agent-run's Prisma client on adapter-pg, confined to agent-run's own schema. */
export function createPrisma(databaseUrl: string, poolSize = 10, timeouts: Parameters<typeof postgresTimeouts>[0] = DEFAULT_TIMEOUTS): PrismaClient {
  const { url, schema } = parseDatabaseUrl(databaseUrl);
  // search_path too: the claim and step writes are raw conditional updates on unqualified tables.
  const adapter = new PrismaPg({ connectionString: url, max: poolSize, options: `-c search_path="${schema}"`, ...postgresTimeouts(timeouts) }, { schema });
  return new PrismaClient({ adapter, transactionOptions: prismaTransactionOptions(timeouts) });
}

@Injectable()
export class PrismaService implements OnApplicationShutdown {
  readonly client: PrismaClient;

  constructor(@Inject(AGENT_RUN_CONFIG) config: AgentRunConfig) {
    this.client = createPrisma(config.DATABASE_URL, config.DATABASE_POOL_SIZE, config);
  }

  /** Health: one round trip to agent-run's Postgres. */
  async ping(): Promise<void> {
    await this.client.$queryRawUnsafe('select 1');
  }

  // After every destroy hook: the worker drains its runs (and writes to the database) before this.
  async onApplicationShutdown(): Promise<void> {
    await this.client.$disconnect();
  }
}
