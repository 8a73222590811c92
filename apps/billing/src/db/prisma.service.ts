import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { parseDatabaseUrl } from '@drael/db-migrate';
import { PrismaClient } from '../generated/prisma/client.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';

/** Creates billing's Prisma client on adapter-pg, confined to billing's own schema. */
export function createPrisma(databaseUrl: string, poolSize = 10): PrismaClient {
  const { url, schema } = parseDatabaseUrl(databaseUrl);
  // search_path too: the billing_hold/billing_resolve functions are called unqualified.
  const adapter = new PrismaPg({ connectionString: url, max: poolSize, options: `-c search_path="${schema}"` }, { schema });
  return new PrismaClient({ adapter });
}

@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly client: PrismaClient;

  constructor(@Inject(BILLING_CONFIG) config: BillingConfig) {
    this.client = createPrisma(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
  }
}
