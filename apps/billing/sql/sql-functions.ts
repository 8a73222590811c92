// Billing's PL/pgSQL functions have one source each: sql/functions/<name>.sql. Migrations carry
// copies (a migration is history and never changes), so this module answers two questions:
// which function's newest migration copy differs from its source (test/sql-functions.spec.ts
// fails on any), and what a new migration must contain to make them equal again:
//
//   pnpm --filter @drael/billing sql:migration <name>
//
// writes prisma/migrations/<timestamp>_<name>/migration.sql with the changed functions. The
// recipe is docs/recipes/add-a-migration.md. Runs under plain `node` (Node 24 strips the types).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const billingRoot = resolve(import.meta.dirname, '..');
export const FUNCTIONS_DIR = join(billingRoot, 'sql/functions');
export const MIGRATIONS_DIR = join(billingRoot, 'prisma/migrations');

// A function statement: CREATE [OR REPLACE] FUNCTION "name"(...) ... $fn$ body $fn$;
const STATEMENT = /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+"([a-z_][a-z0-9_]*)"\s*\([\s\S]*?\$fn\$[\s\S]*?\$fn\$\s*;/gi;

/** One statement as compared: CREATE and CREATE OR REPLACE are the same definition; trailing blanks do not count. */
export function normalise(statement: string): string {
  return statement
    .replace(/^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION/i, 'CREATE OR REPLACE FUNCTION')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/** Every function statement in one SQL text, by function name (the last one wins). */
export function functionStatements(sql: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of sql.matchAll(STATEMENT)) found.set(m[1]!, normalise(m[0]));
  return found;
}

/** Each function's newest definition across the migrations, applied in folder (timestamp) order. */
export function newestInMigrations(dir = MIGRATIONS_DIR): Map<string, { statement: string; migration: string }> {
  const newest = new Map<string, { statement: string; migration: string }>();
  const folders = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  for (const migration of folders) {
    const file = join(dir, migration, 'migration.sql');
    if (!existsSync(file)) continue;
    for (const [name, statement] of functionStatements(readFileSync(file, 'utf8'))) newest.set(name, { statement, migration });
  }
  return newest;
}

/** The source files: one function each, named after it. */
export function sources(dir = FUNCTIONS_DIR): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const name = file.slice(0, -'.sql'.length);
    const statements = functionStatements(readFileSync(join(dir, file), 'utf8'));
    const statement = statements.get(name);
    if (statements.size !== 1 || statement === undefined) throw new Error(`sql/functions/${file} must define exactly one function, "${name}"`);
    out.set(name, statement);
  }
  return out;
}

export interface Drift {
  name: string;
  problem: 'no source file' | 'in no migration' | 'differs';
  /** The migration whose copy is the newest (absent for a function in no migration). */
  migration?: string;
}

/** Where the sources and the migrations disagree; empty when every function's newest migration copy is its source. */
export function drift(functionsDir = FUNCTIONS_DIR, migrationsDir = MIGRATIONS_DIR): Drift[] {
  const src = sources(functionsDir);
  const migrated = newestInMigrations(migrationsDir);
  const out: Drift[] = [];
  for (const [name, { statement, migration }] of migrated) {
    const source = src.get(name);
    if (source === undefined) out.push({ name, problem: 'no source file', migration });
    else if (source !== statement) out.push({ name, problem: 'differs', migration });
  }
  for (const name of src.keys()) if (!migrated.has(name)) out.push({ name, problem: 'in no migration' });
  return out;
}

/** The SQL of a migration that brings every drifted function to its source. */
export function migrationSql(functionsDir = FUNCTIONS_DIR, migrationsDir = MIGRATIONS_DIR): string {
  const src = sources(functionsDir);
  const changed = drift(functionsDir, migrationsDir).filter((d) => d.problem !== 'no source file');
  if (changed.length === 0) return '';
  const header = [
    '-- Generated from apps/billing/sql/functions/ (pnpm --filter @drael/billing sql:migration <name>).',
    '-- Say here why the rule changed. A changed argument list or result type needs a',
    '-- DROP FUNCTION "<name>"(<old argument types>); above its CREATE: add it by hand.',
  ];
  return `${[...header, '', ...changed.map((d) => `${src.get(d.name)}\n`)].join('\n')}`;
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

if (import.meta.main) {
  const [command, name] = process.argv.slice(2);
  if (command !== 'migration' || !name || !/^[a-z0-9_]+$/.test(name)) {
    console.error('usage: node sql/sql-functions.ts migration <name_in_snake_case>');
    process.exit(2);
  }
  const sql = migrationSql();
  if (sql === '') {
    console.log('every function in sql/functions/ already matches its newest migration: nothing to write');
    process.exit(0);
  }
  const folder = join(MIGRATIONS_DIR, `${timestamp(new Date())}_${name}`);
  mkdirSync(folder);
  writeFileSync(join(folder, 'migration.sql'), sql);
  console.log(`wrote ${folder}/migration.sql`);
}
