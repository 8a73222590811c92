import { Injectable } from '@nestjs/common';
import type { AgentTool, InferenceChatRequest } from '@drael/contracts';
import type { AgentToolDefinition } from './agent-tool.js';
import { SandboxExecuteTool } from './sandbox-execute.tool.js';

/** The tools agents may be given, by registry name, and the function definitions the model sees. */
@Injectable()
export class ToolRegistry {
  private readonly byRegistryName: ReadonlyMap<AgentTool, AgentToolDefinition>;

  constructor(sandbox: SandboxExecuteTool) {
    this.byRegistryName = new Map<AgentTool, AgentToolDefinition>([[sandbox.registryName, sandbox]]);
  }

  /** The allowed tools of an agent, resolved; unknown names are dropped. */
  resolve(allowed: readonly string[]): AgentToolDefinition[] {
    return allowed.flatMap((name) => {
      const tool = this.byRegistryName.get(name as AgentTool);
      return tool ? [tool] : [];
    });
  }

  /** A function name the model called, whether or not the agent may use it. */
  byFunctionName(name: string): AgentToolDefinition | undefined {
    return [...this.byRegistryName.values()].find((t) => t.functionName === name);
  }

  functionDefinitions(tools: readonly AgentToolDefinition[]): NonNullable<InferenceChatRequest['tools']> {
    return tools.map((t) => ({ type: 'function' as const, function: { name: t.functionName, description: t.description, parameters: t.parameters } }));
  }
}
