import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { ToolLevel } from '@drael/contracts';
import type { Caller } from '../auth/identity.js';
import { levelAtLeast, lowerLevel } from './tool-levels.js';
import type { FunctionToolDefinition, ServerTool, SubAgentAnswer, ToolContext } from './server-tool.js';
import type { ToolResult } from './tool-result.js';
import { randomId } from '../ids.js';

/** A sub-agent role: the model picks the role, the gateway picks tool level and step budget (spec 04). */
export interface SubAgentRole {
  readonly level: ToolLevel;
  /** Model turns the child may take (its last one without tools, like the parent's sixth). */
  readonly maxTurns: number;
  readonly brief: string;
}

export const SUB_AGENT_ROLES = {
  researcher: {
    level: 'l1_http',
    maxTurns: 4,
    brief: 'You are a research sub-agent. Use web_search and web_fetch to answer the task. Answer concisely with the facts found and their URLs.',
  },
  analyst: {
    level: 'l3_shell',
    maxTurns: 6,
    brief: 'You are an analysis sub-agent. Use run_code to compute or check what the task asks. Answer concisely with the result and how it was obtained.',
  },
  browser: {
    level: 'l4_browser',
    maxTurns: 4,
    brief: 'You are a browsing sub-agent. Read the pages the task needs with web_fetch. Answer concisely with what the pages say and their URLs.',
  },
} as const satisfies Record<string, SubAgentRole>;
export type SubAgentRoleName = keyof typeof SUB_AGENT_ROLES;

// spec 04: at most 4 spawn_agent calls run per turn; the calls past the cap are answered, not run.
export const MAX_SPAWNS_PER_TURN = 4;
// spec 04: children run with max_tokens 4096.
export const CHILD_MAX_TOKENS = 4096;
// How much of a child's answer a progress frame previews.
const PREVIEW_CHARS = 200;

/**
 * spawn_agent (spec 04): a child with its own loop and context, on the parent's alias, at a tool
 * level no higher than its role's and the parent's. The tool decides everything about delegation
 * (fan-out cap, cost ceiling, roles, the answer's shape, the progress frames); the turn loop only
 * runs the child loop it is asked for (ctx.subAgents, absent inside a child: children never spawn).
 */
@Injectable()
export class SpawnAgentTool implements ServerTool {
  readonly name = 'spawn_agent' as const;
  readonly topLevelOnly = true;
  readonly ownFrames = true;

  rolesFor(caller: Pick<Caller, 'tool_level'>): SubAgentRoleName[] {
    return (Object.keys(SUB_AGENT_ROLES) as SubAgentRoleName[]).filter((r) => levelAtLeast(caller.tool_level, SUB_AGENT_ROLES[r].level));
  }

  definition(caller: Pick<Caller, 'tool_level'>): FunctionToolDefinition {
    return {
      type: 'function',
      function: {
        name: this.name,
        description: 'Delegate a self-contained task to a sub-agent with its own tools; calls in one turn run in parallel.',
        parameters: {
          type: 'object',
          properties: { role: { type: 'string', enum: this.rolesFor(caller) }, task: { type: 'string' } },
          required: ['role', 'task'],
        },
      },
    };
  }

  isWired(): boolean {
    // Children run on the parent's own upstream: wired whenever the request is.
    return true;
  }

  async run(args: unknown, ctx: ToolContext): Promise<ToolResult | string> {
    const runner = ctx.subAgents;
    if (!runner) return { error: 'spawn_refused', why: 'a sub-agent cannot start sub-agents; do the task yourself' };
    // spec 04: calls past the cap receive {"error":"delegation_fanout_capped"}.
    if (ctx.ordinal > MAX_SPAWNS_PER_TURN) return { error: 'delegation_fanout_capped' };
    const parsed = this.parse(args, ctx.caller);
    // spec 04: invalid arguments → {"error":"invalid_arguments"}.
    if (!parsed) return { error: 'invalid_arguments' };
    // spec 04: once the ceiling is reached, further spawns return {"error":"request_cost_ceiling"}.
    if (runner.ceilingReached) return { error: 'request_cost_ceiling' };

    const role = SUB_AGENT_ROLES[parsed.role];
    const id = `sub_${randomId().slice(0, 12)}`;
    await runner.frame({ event: 'subagent_started', id, role: parsed.role, task: parsed.task });
    const answer: SubAgentAnswer = await runner.run({
      id,
      caller: { ...ctx.caller, tool_level: lowerLevel(ctx.caller.tool_level, role.level) },
      brief: role.brief,
      task: parsed.task,
      maxTurns: role.maxTurns,
      maxTokens: CHILD_MAX_TOKENS,
    });
    const ceiling = !answer.ok && answer.reason === 'cost_ceiling';
    const preview = answer.ok ? answer.content.slice(0, PREVIEW_CHARS) : ceiling ? 'stopped: the request reached its cost ceiling' : 'the sub-agent failed';
    await runner.frame({ event: 'subagent_done', id, role: parsed.role, ok: answer.ok, preview });
    if (answer.ok) return `SUB-AGENT[${parsed.role}] RESULT: ${answer.content}`;
    return { error: ceiling ? 'request_cost_ceiling' : 'sub_agent_failed' };
  }

  /** The role and task, or undefined when the model's arguments do not name an allowed role and a task. */
  private parse(args: unknown, caller: Caller): { role: SubAgentRoleName; task: string } | undefined {
    const roles = this.rolesFor(caller);
    if (roles.length === 0) return undefined;
    const schema = z.object({ role: z.enum(roles as [SubAgentRoleName, ...SubAgentRoleName[]]), task: z.string().trim().min(1).max(20_000) });
    const parsed = schema.safeParse(args);
    return parsed.success ? parsed.data : undefined;
  }
}
