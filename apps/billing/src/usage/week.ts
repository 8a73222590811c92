/**
 * spec 01 weekly allowances: a week starts Monday 00:00 UTC. billing_hold decides with the SQL
 * form (sql/functions/billing_hold.sql); test/week-rule.spec.ts holds the two equal on Postgres.
 */
export function weekStart(now: Date): Date {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  d.setUTCDate(d.getUTCDate() - sinceMonday);
  return d;
}

/** The UTC day a daily extra-usage ceiling applies to. */
export function utcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
