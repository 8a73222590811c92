import { Injectable } from '@nestjs/common';
import { PrismaService } from '../db/prisma.service.js';
import type { Agent as AgentRow } from '../generated/prisma/client.js';

export type { AgentRow };

export interface AgentWrite {
  name: string;
  model: string;
  instructions: string;
  tools: string[];
  stepLimit: number;
  budgetMicros: number;
}

/** Agents, always scoped to the owning account; deleted agents are kept (their runs refer to them) but never shown. */
@Injectable()
export class AgentRepository {
  constructor(private readonly db: PrismaService) {}

  create(id: string, accountId: string, data: AgentWrite): Promise<AgentRow> {
    return this.db.client.agent.create({ data: { id, accountId, ...data } });
  }

  find(accountId: string, id: string): Promise<AgentRow | null> {
    return this.db.client.agent.findFirst({ where: { id, accountId, deletedAt: null } });
  }

  /** The agent behind a run, even if it was deleted since. */
  findForRun(id: string): Promise<AgentRow | null> {
    return this.db.client.agent.findUnique({ where: { id } });
  }

  list(accountId: string, limit: number, before?: Date): Promise<AgentRow[]> {
    return this.db.client.agent.findMany({
      where: { accountId, deletedAt: null, ...(before ? { createdAt: { lt: before } } : {}) },
      orderBy: { createdAt: 'desc' },
      take: limit,
    });
  }

  async update(accountId: string, id: string, data: Partial<AgentWrite>): Promise<AgentRow | null> {
    const { count } = await this.db.client.agent.updateMany({ where: { id, accountId, deletedAt: null }, data: { ...data, updatedAt: new Date() } });
    return count === 1 ? this.find(accountId, id) : null;
  }

  async softDelete(accountId: string, id: string): Promise<boolean> {
    const { count } = await this.db.client.agent.updateMany({ where: { id, accountId, deletedAt: null }, data: { deletedAt: new Date() } });
    return count === 1;
  }
}
