/**
 * The calendar month (UTC) a monthly budget applies to. spend_reserve decides with the SQL form
 * (sql/functions/spend_reserve.sql); test/week-rule.spec.ts holds the two equal on Postgres.
 */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
