import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { check } from '@drael/db-migrate';

const root = resolve(import.meta.dirname, '..');
const migrationsDir = resolve(root, 'prisma/migrations');

describe('migrations', () => {
  it('match schema.prisma (this fails when the schema changed without a migration)', async () => {
    const res = await check({ databaseUrl: inject('databaseUrl'), schemaPath: resolve(root, 'prisma/schema.prisma'), migrationsDir });
    expect(res).toEqual({ ok: true });
  });

  it('the check does catch a schema change without a migration', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'billing-schema-'));
    try {
      const changed = join(dir, 'schema.prisma');
      await copyFile(resolve(root, 'prisma/schema.prisma'), changed);
      const text = await readFile(changed, 'utf8');
      await writeFile(changed, text.replace('  revokedAt  DateTime?', '  lastUsedAt DateTime? @map("last_used_at")\n  revokedAt  DateTime?'));
      const res = await check({ databaseUrl: inject('databaseUrl'), schemaPath: changed, migrationsDir });
      expect(res.ok).toBe(false);
      expect(res.ok ? '' : res.missingSql).toContain('last_used_at');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
