import { Injectable } from '@nestjs/common';
import type { CursorPage } from '@drael/contracts';
import { PrismaService } from '../db/prisma.service.js';
import { pageQuery, type PageCursor } from '../db/list-page.js';
import { Prisma, type Agent as AgentRow } from '../generated/prisma/client.js';

export type { AgentRow };

export interface AgentWrite {
  name: string;
  model: string;
  instructions: string;
  tools: string[];
  stepLimit: number;
  budgetMicros: number;
}

/** Agents, always scoped to the owning account; deleted agents that runs refer to are kept for them but never shown. */
@Injectable()
export class AgentRepository {
  constructor(private readonly db: PrismaService) {}

  /**
   * Inserts the agent unless the account already has `maxLive` live agents (`cap_reached`, nothing
   * written). The count and the insert hold the account's agents lock, so concurrent creates on
   * any replica never pass the cap.
   */
  create(id: string, accountId: string, data: AgentWrite, maxLive: number): Promise<AgentRow | 'cap_reached'> {
    return this.db.client.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACCOUNT_AGENTS_LOCK}::int, hashtext(${accountId}))`;
      const live = await tx.agent.count({ where: { accountId, deletedAt: null } });
      if (live >= maxLive) return 'cap_reached' as const;
      return tx.agent.create({ data: { id, accountId, ...data } });
    });
  }

  find(accountId: string, id: string): Promise<AgentRow | null> {
    return this.db.client.agent.findFirst({ where: { id, accountId, deletedAt: null } });
  }

  /** The agent behind a run, even if it was deleted since. */
  findForRun(id: string): Promise<AgentRow | null> {
    return this.db.client.agent.findUnique({ where: { id } });
  }

  /** The rows of a page of the account's agents (deleted ones left out), in scan order (pageOf makes the page). */
  list(accountId: string, page: CursorPage, cursor: PageCursor | null): Promise<AgentRow[]> {
    const q = pageQuery(page, cursor);
    return this.db.client.agent.findMany({ where: { accountId, deletedAt: null, ...q.where }, orderBy: q.orderBy, take: q.take });
  }

  /** Where a page after/before this agent starts; a deleted agent kept for its runs still marks its place (one removed names nothing: 400). */
  cursor(accountId: string, id: string): Promise<PageCursor | null> {
    return this.db.client.agent.findFirst({ where: { id, accountId }, select: { id: true, createdAt: true } });
  }

  async update(accountId: string, id: string, data: Partial<AgentWrite>): Promise<AgentRow | null> {
    const { count } = await this.db.client.agent.updateMany({ where: { id, accountId, deletedAt: null }, data: { ...data, updatedAt: new Date() } });
    return count === 1 ? this.find(accountId, id) : null;
  }

  /**
   * Deletes a live agent: removed for good when no run names it (so deleting frees its storage and
   * a create-delete loop leaves nothing behind), otherwise marked deleted and kept for its runs
   * (they are executed with it and name it). False when there was no live agent to delete.
   */
  async delete(accountId: string, id: string): Promise<boolean> {
    try {
      const removed = await this.db.client.$executeRaw`
        DELETE FROM "agents" a WHERE a."id" = ${id} AND a."account_id" = ${accountId} AND a."deleted_at" IS NULL
           AND NOT EXISTS (SELECT 1 FROM "runs" r WHERE r."agent_id" = a."id")`;
      if (removed === 1) return true;
    } catch (err) {
      // A run made meanwhile names it (the runs' foreign key refused the delete): kept, as below.
      if (!isForeignKeyViolation(err)) throw err;
    }
    const { count } = await this.db.client.agent.updateMany({ where: { id, accountId, deletedAt: null }, data: { deletedAt: new Date() } });
    return count === 1;
  }
}

/** Advisory lock class of an account's agent creates (pg_advisory_xact_lock(class, hash of the account)). */
export const ACCOUNT_AGENTS_LOCK = 0x61_72_61; // 'ara'

/** PostgreSQL's foreign_key_violation (23503), as Prisma reports it from a raw statement or a model write. */
export function isForeignKeyViolation(err: unknown): boolean {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError)) return false;
  return err.code === 'P2003' || (err.meta as { code?: string } | undefined)?.code === '23503' || err.message.includes('23503');
}
