import { Injectable } from '@nestjs/common';
import type { CursorPage } from '@drael/contracts';
import { PrismaService } from '../db/prisma.service.js';
import { pageOf, pageQuery, type PageCursor } from '../db/list-page.js';
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

  /** A page of the account's agents (deleted ones left out). */
  async list(accountId: string, page: CursorPage, cursor: PageCursor | null): Promise<{ items: AgentRow[]; hasMore: boolean }> {
    const q = pageQuery(page, cursor);
    const rows = await this.db.client.agent.findMany({ where: { accountId, deletedAt: null, ...q.where }, orderBy: q.orderBy, take: q.take });
    return pageOf(rows, page);
  }

  /** Where a page after/before this agent starts; a deleted agent still marks its place. */
  cursor(accountId: string, id: string): Promise<PageCursor | null> {
    return this.db.client.agent.findFirst({ where: { id, accountId }, select: { id: true, createdAt: true } });
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
