/** The calendar month (UTC) a monthly budget applies to: PostgreSQL's date_trunc('month'). */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
