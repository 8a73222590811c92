import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { ToolLevel } from '@drael/contracts';
import { levelAtLeast } from './tool-levels.js';
import type { Caller, FunctionToolDefinition, ServerTool, ToolContext } from './server-tool.js';
import type { ToolResult } from './tool-result.js';

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

// spec 04: invalid arguments → {"error":"invalid_arguments"}.
export const INVALID_ARGUMENTS = { error: 'invalid_arguments' } as const;

/** spawn_agent: a child with its own loop and context. Execution belongs to the turn loop. */
@Injectable()
export class SpawnAgentTool implements ServerTool {
  readonly name = 'spawn_agent' as const;
  readonly minLevel = 'l1_http' as const;

  rolesFor(caller: Caller): SubAgentRoleName[] {
    return (Object.keys(SUB_AGENT_ROLES) as SubAgentRoleName[]).filter((r) => levelAtLeast(caller.tool_level, SUB_AGENT_ROLES[r].level));
  }

  definition(caller: Caller): FunctionToolDefinition {
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

  async isWired(): Promise<boolean> {
    // Children run on the parent's own upstream: wired whenever the request is.
    return true;
  }

  /** The role and task, or undefined when the model's arguments do not name an allowed role and a task. */
  parse(args: unknown, caller: Caller): { role: SubAgentRoleName; task: string } | undefined {
    const schema = z.object({ role: z.enum(this.rolesFor(caller) as [SubAgentRoleName, ...SubAgentRoleName[]]), task: z.string().trim().min(1).max(20_000) });
    if (this.rolesFor(caller).length === 0) return undefined;
    const parsed = schema.safeParse(args);
    return parsed.success ? parsed.data : undefined;
  }

  async run(_args: unknown, _ctx: ToolContext): Promise<ToolResult> {
    // Reached only when no runner is present: a sub-agent's forged call (spec 04: children never spawn).
    return { error: 'spawn_refused', why: 'a sub-agent cannot start sub-agents; do the task yourself' };
  }
}
