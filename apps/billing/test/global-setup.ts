import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { deploy, parseDatabaseUrl } from '@drael/db-migrate';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

const here = resolve(import.meta.dirname, '..');

/**
 * Applies billing's migrations, with the same deploy command bring-up uses, to a schema of this
 * run's own (so parallel runs and a developer's data never meet), and drops it afterwards.
 */
export default async function setup(project: TestProject) {
  const base = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael';
  const u = new URL(base);
  const schema = `billing_test_${randomBytes(4).toString('hex')}`;
  u.searchParams.set('schema', schema);
  const databaseUrl = u.toString();
  await deploy({ databaseUrl, schemaPath: resolve(here, 'prisma/schema.prisma'), migrationsDir: resolve(here, 'prisma/migrations') });
  project.provide('databaseUrl', databaseUrl);

  return async () => {
    const client = new pg.Client({ connectionString: parseDatabaseUrl(databaseUrl).url });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  };
}
