import { Injectable } from '@nestjs/common';
import { allowedTools } from './tool-levels.js';
import { RunCodeTool } from './run-code.tool.js';
import { WebSearchTool } from './web-search.tool.js';
import { WebFetchTool } from './web-fetch.tool.js';
import { GenerateImageTool } from './generate-image.tool.js';
import { BreachLookupTool, ContactLookupTool } from './lookup.tools.js';
import { SpawnAgentTool } from './spawn-agent.tool.js';
import type { Caller } from '../auth/identity.js';
import { MAX_CATALOGUE_TOOLS, type FunctionToolDefinition, type ServerTool, type ToolName } from './server-tool.js';

/** The catalogue one request is served: every tool visible at once (no menu, no indirection). */
export interface ServedCatalogue {
  /** The tools a call may reach (a sub-agent's include the top-level-only ones, which refuse it). */
  readonly tools: ReadonlyMap<ToolName, ServerTool>;
  /** What the model is shown. */
  readonly definitions: readonly FunctionToolDefinition[];
}

/**
 * Decides what a request is served (spec 01 "The catalogue"): every tool whose provider is wired,
 * narrowed by the key's tool level; a sub-agent is not shown the top-level-only tools (spawn_agent,
 * spec 04). The plan does not narrow it: a tool the plan lacks is served and answers plan_required.
 */
@Injectable()
export class ToolCatalogue {
  private readonly all: readonly ServerTool[];

  constructor(
    runCode: RunCodeTool,
    webSearch: WebSearchTool,
    webFetch: WebFetchTool,
    image: GenerateImageTool,
    breach: BreachLookupTool,
    contact: ContactLookupTool,
    spawnAgent: SpawnAgentTool,
  ) {
    this.all = [runCode, webSearch, webFetch, image, breach, contact, spawnAgent];
    // spec 01: a hard ceiling of eight; adding a tool is an architecture decision, not a commit.
    if (this.all.length > MAX_CATALOGUE_TOOLS) throw new Error(`the catalogue has ${this.all.length} tools; the ceiling is ${MAX_CATALOGUE_TOOLS}`);
  }

  async served(caller: Caller, options: { subAgent: boolean }): Promise<ServedCatalogue> {
    const allowed = allowedTools(caller.tool_level);
    const candidates = this.all.filter((t) => allowed.has(t.name));
    const wired = await Promise.all(candidates.map((t) => t.isWired()));
    const tools = candidates.filter((_, i) => wired[i]);
    return {
      tools: new Map(tools.map((t) => [t.name, t])),
      definitions: tools.filter((t) => !(options.subAgent && t.topLevelOnly)).map((t) => t.definition(caller)),
    };
  }
}
