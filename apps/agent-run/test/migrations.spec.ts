import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { check } from '@drael/db-migrate';
import { BASE_DB } from './harness.js';

// agent-run's migrations are the history of its schema (docs/recipes/add-a-migration.md): a change
// to prisma/schema.prisma without a migration would reach production only as a failed query. The
// same check billing's test/migrations.spec.ts makes (db-migrate's `check`, over a shadow database).
const root = resolve(import.meta.dirname, '..');

describe('migrations', () => {
  it('match schema.prisma (this fails when the schema changed without a migration)', async () => {
    const res = await check({ databaseUrl: BASE_DB, schemaPath: resolve(root, 'prisma/schema.prisma'), migrationsDir: resolve(root, 'prisma/migrations') });
    expect(res).toEqual({ ok: true });
  }, 120_000);
});
