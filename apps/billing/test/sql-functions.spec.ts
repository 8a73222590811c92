import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { drift, FUNCTIONS_DIR, functionStatements, migrationSql, MIGRATIONS_DIR, sources } from '../sql/sql-functions.js';

// sql/functions/<name>.sql is the one place a billing rule written in PL/pgSQL is read; the
// migrations must apply exactly that (see docs/recipes/add-a-migration.md).

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function copyOfSources(): string {
  const dir = mkdtempSync(join(tmpdir(), 'billing-sql-'));
  scratch.push(dir);
  cpSync(FUNCTIONS_DIR, dir, { recursive: true });
  return dir;
}

describe('billing SQL functions', () => {
  it('each function has one source file, and its newest migration copy is that file', () => {
    expect(drift()).toEqual([]);
    // Every function the migrations define is among the sources (the scan did find them).
    expect([...sources().keys()].sort()).toEqual([
      'billing_hold',
      'billing_hold_immutable',
      'billing_release_by_key',
      'billing_resolve',
      'spend_reserve',
      'spend_resolve',
      'spend_settle',
    ]);
  });

  it('a source edited without a migration is caught, and the generated migration carries the edit', () => {
    const dir = copyOfSources();
    const file = join(dir, 'billing_hold.sql');
    writeFileSync(file, readFileSync(file, 'utf8').replace("date_trunc('week', p_now AT TIME ZONE 'UTC')", "date_trunc('week', p_now AT TIME ZONE 'Europe/Paris')"));
    expect(drift(dir)).toEqual([{ name: 'billing_hold', problem: 'differs', migration: '20261129133000_hold_in_one_round_trip' }]);
    const sql = migrationSql(dir);
    expect([...functionStatements(sql).keys()]).toEqual(['billing_hold']);
    expect(sql).toContain("AT TIME ZONE 'Europe/Paris'");

    // Once a migration carries it, the check passes again.
    const migrations = mkdtempSync(join(tmpdir(), 'billing-migrations-'));
    scratch.push(migrations);
    cpSync(MIGRATIONS_DIR, migrations, { recursive: true });
    const next = join(migrations, '29991231000000_paris_weeks');
    mkdirSync(next);
    writeFileSync(join(next, 'migration.sql'), sql);
    expect(drift(dir, migrations)).toEqual([]);
  });

  it('a function with no source file, or a source in no migration, is caught', () => {
    const dir = copyOfSources();
    rmSync(join(dir, 'spend_settle.sql'));
    writeFileSync(join(dir, 'billing_nothing.sql'), 'CREATE OR REPLACE FUNCTION "billing_nothing"() RETURNS int LANGUAGE plpgsql AS $fn$\nBEGIN RETURN 1; END $fn$;\n');
    expect(drift(dir)).toEqual([
      { name: 'spend_settle', problem: 'no source file', migration: '20261129154000_agent_spend_lock_order' },
      { name: 'billing_nothing', problem: 'in no migration' },
    ]);
  });
});
