import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { postgresTimeouts, prismaTransactionOptions } from '@drael/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { parseDatabaseUrl } from '@drael/db-migrate';
import { PrismaClient } from '../generated/prisma/client.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';

/**
 * Billing's database: ONE pg pool, confined to billing's schema, under two access paths: the
 * Prisma client (adapter-pg) for the ordinary rows, and the pool itself for the two hot-path
 * function calls (billing_hold, billing_resolve), which need no query building and run on every
 * paid tool call. Both live only in repositories.
 */
@Injectable()
export class PrismaService implements OnModuleDestroy {
  readonly pool: pg.Pool;
  readonly client: PrismaClient;

  constructor(@Inject(BILLING_CONFIG) config: BillingConfig) {
    const { url, schema } = parseDatabaseUrl(config.DATABASE_URL);
    // search_path too: the functions are called unqualified.
    this.pool = new pg.Pool({ connectionString: url, max: config.DATABASE_POOL_SIZE, options: `-c search_path="${schema}"`, ...postgresTimeouts(config) });
    // An idle client whose server went away emits 'error' on the pool; unhandled, that would end
    // the process. The pool drops that client; the next query reconnects, and health reports it.
    this.pool.on('error', () => undefined);
    this.client = new PrismaClient({ adapter: new PrismaPg(this.pool, { schema }), transactionOptions: prismaTransactionOptions(config) });
  }

  /** Health: one round trip on the pool (connects if it has no idle client). */
  async ping(): Promise<void> {
    await this.pool.query('select 1');
  }

  async onModuleDestroy(): Promise<void> {
    await this.client.$disconnect();
    await this.pool.end();
  }
}
