import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseDatabaseUrl } from '@drael/db-migrate';
import { FUNCTIONS_DIR } from '../sql/sql-functions.js';
import { monthStart } from '../src/spend/month.js';
import { utcDay, weekStart } from '../src/usage/week.js';

// The week, day and month windows are written twice: in SQL (billing_hold and spend_reserve
// decide with them) and in TypeScript (the usage and wallet readers look rows up by them). This
// runs the SQL exactly as the source files write it, on real Postgres, over many instants, and
// compares. Change one side alone and this fails.

/** The right-hand side of `<variable> date := <expression>;` in a function's source file. */
function sqlRule(fn: string, variable: string): string {
  const source = readFileSync(join(FUNCTIONS_DIR, `${fn}.sql`), 'utf8');
  const m = new RegExp(`\\b${variable}\\s+date\\s*:=\\s*([^;]+);`).exec(source);
  if (!m) throw new Error(`${fn}.sql no longer assigns ${variable}: update this test with the rule's new form`);
  return m[1]!.replace(/\bp_now\b/g, 't');
}

/** Instants around every boundary that matters: midnights, Mondays, month and year ends, leap days. */
function instants(): Date[] {
  const out: Date[] = [];
  const start = Date.UTC(2023, 11, 25); // a Monday, four years of weeks with a leap day inside
  const hour = 3_600_000;
  for (let t = start; t < Date.UTC(2028, 2, 2); t += 7 * hour) out.push(new Date(t)); // 7 h steps cross every hour of every weekday
  for (let day = start; day < Date.UTC(2028, 2, 2); day += 24 * hour) {
    out.push(new Date(day - 1), new Date(day), new Date(day + 1)); // each UTC midnight, ±1 ms
  }
  out.push(new Date('2024-02-29T12:00:00.000Z'), new Date('2027-12-31T23:59:59.999Z'), new Date('2028-01-01T00:00:00.000Z'));
  return out;
}

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: parseDatabaseUrl(inject('databaseUrl')).url });
  await client.connect();
  // A session time zone far from UTC: the rule must not depend on the server's or the session's.
  await client.query("SET TIME ZONE 'Pacific/Kiritimati'");
});
afterAll(async () => {
  await client.end();
});

describe('week, day and month rules: TypeScript equals the SQL', () => {
  it('over every 7th hour and every midnight (±1 ms) of four years', async () => {
    const at = instants();
    expect(at.length).toBeGreaterThan(9_000);
    const week = sqlRule('billing_hold', 'v_week');
    const day = sqlRule('billing_hold', 'v_day');
    const month = sqlRule('spend_reserve', 'v_month');
    const { rows } = await client.query<{ week: string; day: string; month: string }>(
      `SELECT to_char(${week}, 'YYYY-MM-DD') AS week, to_char(${day}, 'YYYY-MM-DD') AS day, to_char(${month}, 'YYYY-MM-DD') AS month
         FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n`,
      [at.map((d) => d.toISOString())],
    );
    const iso = (d: Date) => d.toISOString().slice(0, 10);
    const differing = at
      .map((d, i) => ({ at: d.toISOString(), sql: rows[i], ts: { week: iso(weekStart(d)), day: iso(utcDay(d)), month: iso(monthStart(d)) } }))
      .filter((r) => r.sql?.week !== r.ts.week || r.sql.day !== r.ts.day || r.sql.month !== r.ts.month);
    expect(differing.slice(0, 5)).toEqual([]);
    expect(rows).toHaveLength(at.length);
  });
});
