import { Injectable } from '@nestjs/common';
import type { ToolLevel } from '@drael/contracts';
import { PrismaService } from '../db/prisma.service.js';

export interface KeyWithAccount {
  id: string;
  accountId: string;
  toolLevel: ToolLevel;
  perMinute: number;
  perHour: number;
  revokedAt: Date | null;
  expiresAt: Date | null;
  plan: string;
}

@Injectable()
export class KeyRepository {
  constructor(private readonly db: PrismaService) {}

  async create(row: {
    id: string;
    accountId: string;
    name?: string;
    hash: string;
    hint: string;
    toolLevel: ToolLevel;
    perMinute: number;
    perHour: number;
    expiresAt: Date | null;
  }) {
    await this.db.client.apiKey.create({ data: row });
  }

  async findByHash(hash: string): Promise<KeyWithAccount | null> {
    const key = await this.db.client.apiKey.findUnique({
      where: { hash },
      select: { id: true, accountId: true, toolLevel: true, perMinute: true, perHour: true, revokedAt: true, expiresAt: true, account: { select: { plan: true } } },
    });
    return key ? { ...key, plan: key.account.plan } : null;
  }

  /** Revokes a key of this account; 'missing' when the account has no such key. */
  async revoke(accountId: string, keyId: string, at: Date): Promise<'revoked' | 'already' | 'missing'> {
    const res = await this.db.client.apiKey.updateMany({ where: { id: keyId, accountId, revokedAt: null }, data: { revokedAt: at } });
    if (res.count === 1) return 'revoked';
    const exists = await this.db.client.apiKey.count({ where: { id: keyId, accountId } });
    return exists ? 'already' : 'missing';
  }

  /** An account's keys, newest first: what a listing may show (never the hash). */
  listOf(accountId: string) {
    return this.db.client.apiKey.findMany({
      where: { accountId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, name: true, hint: true, toolLevel: true, perMinute: true, perHour: true, createdAt: true, revokedAt: true, expiresAt: true },
    });
  }
}
