import { Injectable } from '@nestjs/common';
import { PrismaService } from '../db/prisma.service.js';

export interface AccountRow {
  id: string;
  name: string;
  plan: string;
  extraUsageEnabled: boolean;
  dailyCeiling: number;
}

@Injectable()
export class AccountRepository {
  constructor(private readonly db: PrismaService) {}

  create(row: { id: string; name: string; plan: string; extraUsageEnabled: boolean; dailyCeiling: number }): Promise<AccountRow> {
    return this.db.client.account.create({ data: row });
  }

  find(id: string): Promise<AccountRow | null> {
    return this.db.client.account.findUnique({
      where: { id },
      select: { id: true, name: true, plan: true, extraUsageEnabled: true, dailyCeiling: true },
    });
  }

  /**
   * Turns extra usage on or off and sets the daily ceiling. Today's extra-usage row (if any) takes
   * the new ceiling at once, never below what is already used or held there.
   */
  async setExtraUsage(id: string, enabled: boolean, dailyCeiling: number, today: Date): Promise<AccountRow | null> {
    return this.db.client.$transaction(async (tx) => {
      const updated = await tx.account.updateMany({ where: { id }, data: { extraUsageEnabled: enabled, dailyCeiling } });
      if (updated.count === 0) return null;
      await tx.$executeRaw`UPDATE "daily_extras" SET "ceiling" = GREATEST(${dailyCeiling}::int, "used" + "held")
                           WHERE "account_id" = ${id}::uuid AND "day" = ${today}::date`;
      return tx.account.findUnique({ where: { id }, select: { id: true, name: true, plan: true, extraUsageEnabled: true, dailyCeiling: true } });
    });
  }

  /** Newest first, then by id; after the account `before` when given (keyset pagination). */
  async list(limit: number, before?: { id: string; createdAt: Date }) {
    return this.db.client.account.findMany({
      where: before ? { OR: [{ createdAt: { lt: before.createdAt } }, { createdAt: before.createdAt, id: { lt: before.id } }] } : {},
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true, name: true, plan: true, extraUsageEnabled: true, dailyCeiling: true, createdAt: true },
    });
  }

  createdAt(id: string) {
    return this.db.client.account.findUnique({ where: { id }, select: { id: true, createdAt: true } });
  }
}
