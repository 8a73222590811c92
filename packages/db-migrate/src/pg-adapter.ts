import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;
const COLUMN_TYPE_CHARACTER = 6; // ColumnTypeEnum.Character in @prisma/driver-adapter-utils

type Fields = { fields?: { dataTypeID: number }[] };

/** SQL text → indexes of its `"char"` columns (a statement's column types never change). */
const charColumnsBySql = new Map<string, number[]>();

function charAsText<T>(sql: string | undefined, result: T): T {
  for (const r of Array.isArray(result) ? (result as Fields[]) : [result as Fields]) {
    const idx: number[] = [];
    (r?.fields ?? []).forEach((f, i) => {
      if (f.dataTypeID === PG_CHAR_OID) {
        f.dataTypeID = PG_TEXT_OID;
        idx.push(i);
      }
    });
    if (idx.length && sql) charColumnsBySql.set(sql, idx);
  }
  return result;
}

/**
 * The schema engine's catalog queries return PostgreSQL's internal `"char"` type (OID 18), which
 * adapter-pg 7.10 cannot map (it throws). Its values already arrive as one-letter strings, so the
 * column passes through the adapter labelled as text and is then handed to the engine as the
 * Character type it expects (see withCharColumns).
 */
class CharAsTextClient extends pg.Client {
  override query(...args: unknown[]): never {
    const first = args[0];
    const sql = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      const cb = last as (err: unknown, res: unknown) => void;
      // A const first: V8 pretenures a function literal assigned to a property (eslint.config.js).
      const withText = (err: unknown, res: unknown) => cb(err, err ? res : charAsText(sql, res));
      args[args.length - 1] = withText;
      return (super.query as (...a: unknown[]) => never)(...args);
    }
    const ret = (super.query as (...a: unknown[]) => unknown)(...args);
    if (ret && typeof (ret as Promise<unknown>).then === 'function') return (ret as Promise<unknown>).then((r) => charAsText(sql, r)) as never;
    return ret as never;
  }
}

type Queryable = Pick<SqlDriverAdapter, 'queryRaw'>;

function withCharColumns<Q extends Queryable>(q: Q): Q {
  const queryRaw = q.queryRaw.bind(q);
  const queryRawWithChars: Q['queryRaw'] = async (query) => {
    const result = await queryRaw(query);
    for (const i of charColumnsBySql.get(query.sql) ?? []) (result.columnTypes as number[])[i] = COLUMN_TYPE_CHARACTER;
    return result;
  };
  q.queryRaw = queryRawWithChars;
  return q;
}

export interface Target {
  /** Connection string without the `schema` parameter. */
  url: string;
  /** The PostgreSQL schema (namespace) the service's tables live in. */
  schema: string;
}

/** Splits Prisma's `?schema=` convention off a DATABASE_URL (pg would not understand it). */
export function parseDatabaseUrl(databaseUrl: string): Target {
  const u = new URL(databaseUrl);
  const schema = u.searchParams.get('schema') ?? 'public';
  u.searchParams.delete('schema');
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new Error(`schema name ${JSON.stringify(schema)} is not a plain identifier`);
  return { url: u.toString(), schema };
}

function poolConfig(url: string, schema: string): pg.PoolConfig {
  // Migrations are written without a schema qualifier, so search_path decides where they land
  // (that is what lets tests apply the same migrations to a schema of their own).
  return { connectionString: url, Client: CharAsTextClient, options: `-c search_path="${schema}"`, max: 2 };
}

/**
 * Wraps one adapter so that a migration script runs as ONE multi-statement query: adapter-pg's
 * executeScript splits on ";" which would cut a statement holding a ";" inside a literal.
 */
function wholeScripts(adapter: SqlDriverAdapter, pool: () => pg.Pool): SqlDriverAdapter {
  const executeScript = async (script: string) => {
    await pool().query(script);
  };
  adapter.executeScript = executeScript;
  const startTransaction = adapter.startTransaction.bind(adapter);
  const startTransactionWithChars: SqlDriverAdapter['startTransaction'] = async (...args) => withCharColumns(await startTransaction(...args));
  adapter.startTransaction = startTransactionWithChars;
  return withCharColumns(adapter);
}

/**
 * The driver-adapter factory the wasm engine talks through. The shadow database (needed by
 * `create` and `check`) is created and dropped here: adapter-pg's own connectToShadowDb drops
 * the database before closing its pool, which PostgreSQL refuses while the pool is connected.
 */
export function migrationAdapterFactory(target: Target): SqlMigrationAwareDriverAdapterFactory & { close(): Promise<void> } {
  const main = new PrismaPg(poolConfig(target.url, target.schema), { schema: target.schema });
  const connected: SqlDriverAdapter[] = [];
  return {
    provider: 'postgres',
    adapterName: '@drael/db-migrate',
    connect: async () => {
      const adapter = await main.connect();
      connected.push(adapter);
      return wholeScripts(adapter, () => (adapter as unknown as { underlyingDriver(): pg.Pool }).underlyingDriver());
    },
    // The engine takes PostgreSQL's session-level advisory lock (pg_advisory_lock(72707369), one
    // per database, every schema) and never unlocks it: the lock ends with its connection. Left to
    // the pool, that connection idles for pg's idleTimeoutMillis (10 s), and every other deploy on
    // the database (the next test schema, another service's bring-up) waits those 10 s for the lock.
    close: async () => {
      // The migration's outcome is already known: a pool that fails to end does not change it.
      await Promise.allSettled(connected.splice(0).map((a) => a.dispose()));
    },
    connectToShadowDb: async () => {
      const database = `drael_shadow_${randomUUID().replaceAll('-', '')}`;
      const admin = new pg.Client({ connectionString: target.url });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${database}"`);
      } finally {
        await admin.end();
      }
      const u = new URL(target.url);
      u.pathname = `/${database}`;
      const shadow = new PrismaPg(poolConfig(u.toString(), target.schema), { schema: target.schema });
      const adapter = await shadow.connect();
      const pool = (adapter as unknown as { underlyingDriver(): pg.Pool }).underlyingDriver();
      await pool.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema}"`);
      const dispose = adapter.dispose.bind(adapter);
      const disposeAndDrop = async () => {
        await dispose(); // closes the shadow pool first
        const dropper = new pg.Client({ connectionString: target.url });
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS "${database}"`);
        } finally {
          await dropper.end();
        }
      };
      adapter.dispose = disposeAndDrop;
      return wholeScripts(adapter, () => pool);
    },
  };
}
