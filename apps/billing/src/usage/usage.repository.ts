import { Injectable } from '@nestjs/common';
import { PrismaService } from '../db/prisma.service.js';

@Injectable()
export class UsageRepository {
  constructor(private readonly db: PrismaService) {}

  weekly(accountId: string, weekStart: Date) {
    return this.db.client.weeklyAllowance.findMany({ where: { accountId, weekStart }, select: { meter: true, allowance: true, used: true, held: true } });
  }

  daily(accountId: string, day: Date) {
    return this.db.client.dailyExtra.findUnique({ where: { accountId_day: { accountId, day } }, select: { ceiling: true, used: true, held: true } });
  }

  /** Extra-usage units per meter held or settled in this week (what went past the allowance). */
  async extraByMeter(accountId: string, weekStart: Date): Promise<Map<string, number>> {
    const rows = await this.db.client.$queryRaw<{ meter: string; extra: number }[]>`
      SELECT "meter", COALESCE(SUM(CASE WHEN "status" = 'held' THEN "extra_units"
                                        WHEN "status" = 'settled' THEN GREATEST("settled_units" - "plan_units", 0)
                                        ELSE 0 END), 0)::int AS extra
        FROM "holds" WHERE "account_id" = ${accountId}::uuid AND "week_start" = ${weekStart}::date GROUP BY "meter"`;
    return new Map(rows.map((r) => [r.meter, r.extra]));
  }

  /** Settled paid-tool holds per UTC day from `from` on (the day a hold counts in), with their units per meter. */
  toolCallsByDay(accountId: string, from: Date) {
    return this.db.client.$queryRaw<{ day: string; meter: string; calls: number; units: number }[]>`
      SELECT to_char("day", 'YYYY-MM-DD') AS day, "meter", COUNT(*)::int AS calls, COALESCE(SUM("settled_units"), 0)::int AS units
        FROM "holds" WHERE "account_id" = ${accountId}::uuid AND "status" = 'settled' AND "day" >= ${from}::date
       GROUP BY 1, 2`;
  }

  /** Settled agent spend per UTC day (of settlement) from `from` on: steps and micro-dollars. */
  spendByDay(accountId: string, from: Date) {
    return this.db.client.$queryRaw<{ day: string; steps: number; micros: bigint }[]>`
      SELECT to_char(("resolved_at" AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, COUNT(*)::int AS steps, COALESCE(SUM("settled_micros"), 0)::bigint AS micros
        FROM "spend_holds" WHERE "account_id" = ${accountId}::uuid AND "status" = 'settled' AND "resolved_at" >= ${from}
       GROUP BY 1`;
  }
}
