import { Inject, Injectable } from '@nestjs/common';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from '../config/config.schema.js';
import { AGENT_TOOL_LEVEL, AgentCreateBodySchema, AgentUpdateBodySchema, toolsBeyondLevel, type Agent, type AgentTool, type CursorPage, type ToolLevel } from '@drael/contracts';
import type { z } from 'zod';
import { FieldCipher } from '../crypto/field-cipher.js';
import { newId } from '../db/ids.js';
import { AgentRunError } from '../agent-run-error.js';
import { microsToUsd, usdToMicros } from '../loop/money.js';
import { NatsRpcClient } from '@drael/nats-rpc';
import { pageOf, pageRoomBytes, resolveCursor } from '../db/list-page.js';
import { AgentRepository, type AgentRow, type AgentWrite } from './agent.repository.js';

type CreateBody = z.output<typeof AgentCreateBodySchema>;
type UpdateBody = z.output<typeof AgentUpdateBodySchema>;

/** Agents: saved configurations (model, instructions, tools, limits). Instructions are encrypted at rest. */
@Injectable()
export class AgentsService {
  constructor(
    @Inject(AGENT_RUN_CONFIG) private readonly config: AgentRunConfig,
    private readonly agents: AgentRepository,
    private readonly cipher: FieldCipher,
    private readonly rpc: NatsRpcClient,
  ) {}

  async create(accountId: string, toolLevel: ToolLevel, body: CreateBody): Promise<Agent> {
    assertToolsAllowed(toolLevel, body.tools, 'tools');
    const id = newId('agent');
    const max = this.config.AGENT_RUN_ACCOUNT_MAX_AGENTS;
    const row = await this.agents.create(
      id,
      accountId,
      {
        name: body.name,
        model: body.model,
        instructions: this.seal(id, body.instructions),
        tools: [...new Set(body.tools)],
        stepLimit: body.limits.step_limit,
        budgetMicros: usdToMicros(body.limits.budget_usd),
      },
      max,
    );
    if (row === 'cap_reached') {
      throw new AgentRunError('quota_exceeded', `this account has ${max} agents, the most it may; delete some to make room`, { limit: max });
    }
    return this.toAgent(row);
  }

  async get(accountId: string, id: string): Promise<Agent> {
    return this.toAgent(await this.mustFind(accountId, id));
  }

  async list(accountId: string, page: CursorPage): Promise<{ agents: Agent[]; has_more: boolean }> {
    const cursor = await resolveCursor(page, (id) => this.agents.cursor(accountId, id));
    const { items, hasMore } = pageOf(await this.agents.list(accountId, page, cursor), page, (r) => this.toAgent(r), pageRoomBytes(this.rpc));
    return { agents: items, has_more: hasMore };
  }

  async update(accountId: string, id: string, toolLevel: ToolLevel, patch: UpdateBody): Promise<Agent> {
    await this.mustFindChangeable(accountId, id, toolLevel);
    // ... and the tools it will have: a key cannot take an agent's tools away to make it one it may change.
    if (patch.tools !== undefined) assertToolsAllowed(toolLevel, patch.tools, 'tools');
    const data: Partial<AgentWrite> = {};
    if (patch.name !== undefined) data.name = patch.name;
    if (patch.model !== undefined) data.model = patch.model;
    if (patch.instructions !== undefined) data.instructions = this.seal(id, patch.instructions);
    if (patch.tools !== undefined) data.tools = [...new Set(patch.tools)];
    if (patch.limits?.step_limit !== undefined) data.stepLimit = patch.limits.step_limit;
    if (patch.limits?.budget_usd !== undefined) data.budgetMicros = usdToMicros(patch.limits.budget_usd);
    const row = await this.agents.update(accountId, id, data);
    if (!row) throw notFound(id);
    return this.toAgent(row);
  }

  async delete(accountId: string, id: string, toolLevel: ToolLevel): Promise<{ id: string; deleted: boolean }> {
    await this.mustFindChangeable(accountId, id, toolLevel);
    if (!(await this.agents.delete(accountId, id))) throw notFound(id);
    return { id, deleted: true };
  }

  /**
   * The agent, if this key may change or delete it: the key must be allowed every tool the agent
   * has, so a key of a lower level can neither reconfigure (say, rewrite the instructions of) an
   * agent that executes code nor delete it (and make it again at its own level). The one rule of
   * PATCH and DELETE (attack report F7); cancelling a run stays open to any key of the account.
   */
  private async mustFindChangeable(accountId: string, id: string, toolLevel: ToolLevel): Promise<AgentRow> {
    const row = await this.mustFind(accountId, id);
    assertToolsAllowed(toolLevel, row.tools, 'agent_id');
    return row;
  }

  async mustFind(accountId: string, id: string): Promise<AgentRow> {
    const row = await this.agents.find(accountId, id);
    if (!row) throw notFound(id);
    return row;
  }

  /** The plaintext instructions of an agent row. */
  instructionsOf(row: AgentRow): string {
    return this.cipher.decrypt(row.instructions, { table: 'agents', id: row.id, column: 'instructions' });
  }

  private seal(id: string, instructions: string): string {
    return this.cipher.encrypt(instructions, { table: 'agents', id, column: 'instructions' });
  }

  private toAgent(row: AgentRow): Agent {
    return {
      id: row.id,
      account_id: row.accountId,
      name: row.name,
      model: row.model,
      instructions: this.instructionsOf(row),
      tools: row.tools as Agent['tools'],
      limits: { step_limit: row.stepLimit, budget_usd: microsToUsd(row.budgetMicros) },
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    };
  }
}

/**
 * spec 04: a key's tool level bounds what it may do, and an agent is no way around it: an agent may
 * only be given tools the key that configures it may use, and a run only starts from a key that
 * may use every tool of its agent (checked again at each run, so a key of a lower level cannot run
 * an agent another key made).
 */
export function assertToolsAllowed(level: ToolLevel, tools: readonly string[], param: string): void {
  const beyond = toolsBeyondLevel(level, tools);
  if (beyond.length === 0) return;
  const first = beyond[0] as AgentTool;
  const index = tools.indexOf(first);
  throw new AgentRunError('tool_not_allowed', `this key's tool level ${level} does not allow ${first} (it needs ${AGENT_TOOL_LEVEL[first] ?? 'a known tool'})`, {
    param: param === 'tools' ? `tools[${index}]` : param,
  });
}

const notFound = (id: string) => new AgentRunError('agent_not_found', `no agent ${id} in this account`);
