import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl, readMigrations } from '../src/index.js';

describe('parseDatabaseUrl', () => {
  it("splits Prisma's ?schema= off the URL, defaulting to public", () => {
    expect(parseDatabaseUrl('postgresql://u@h:5432/db?schema=billing&sslmode=disable')).toEqual({
      url: 'postgresql://u@h:5432/db?sslmode=disable',
      schema: 'billing',
    });
    expect(parseDatabaseUrl('postgresql://u@h/db').schema).toBe('public');
  });

  it('refuses a schema name that is not a plain identifier (it is spliced into SQL)', () => {
    expect(() => parseDatabaseUrl('postgresql://u@h/db?schema=a";drop')).toThrow(/plain identifier/);
  });
});

describe('readMigrations', () => {
  it('lists migration folders in name order with their SQL and the lockfile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    try {
      for (const name of ['20260102000000_b', '20260101000000_a']) {
        await mkdir(join(dir, name));
        await writeFile(join(dir, name, 'migration.sql'), `-- ${name}`);
      }
      await writeFile(join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
      const list = await readMigrations(dir);
      expect(list.migrationDirectories.map((d) => d.path)).toEqual(['20260101000000_a', '20260102000000_b']);
      expect(list.migrationDirectories[0]!.migrationFile.content).toEqual({ tag: 'ok', value: '-- 20260101000000_a' });
      expect(list.lockfile.content).toContain('postgresql');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an absent folder is an empty list', async () => {
    const list = await readMigrations(join(tmpdir(), 'no-such-migrations-folder'));
    expect(list.migrationDirectories).toEqual([]);
    expect(list.lockfile.content).toBeNull();
  });
});
