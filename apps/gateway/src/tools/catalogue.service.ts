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
  /** The same, serialised once: the `tools` of every turn's upstream body (issue 20). */
  readonly definitionsJson: string;
}

/**
 * Decides what a request is served (spec 01 "The catalogue"): every tool whose provider is wired,
 * narrowed by the key's tool level; a sub-agent is not shown the top-level-only tools (spawn_agent,
 * spec 04). The plan does not narrow it: a tool the plan lacks is served and answers plan_required.
 */
@Injectable()
export class ToolCatalogue {
  private readonly all: readonly ServerTool[];
  /**
   * What was served, by what decides it: the tool level, sub-agent or not, and which candidates
   * are wired (at most 4 levels × 2 × 2^7 entries). Requests of one key level share one frozen
   * catalogue, so its definitions are built and serialised once, not per request.
   */
  private readonly servedBy = new Map<string, ServedCatalogue>();
  private readonly candidatesByLevel = new Map<Caller['tool_level'], readonly ServerTool[]>();

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

  /**
   * The catalogue for this caller: at once when every candidate's wiring is known (a fresh health
   * answer, most requests: no promise per tool, issue 20), after the probes otherwise.
   */
  served(caller: Caller, options: { subAgent: boolean }): ServedCatalogue | Promise<ServedCatalogue> {
    const candidates = this.candidatesOf(caller.tool_level);
    const wiring: Array<boolean | Promise<boolean>> = candidates.map((t) => t.isWired());
    const known = wiring.filter((w): w is boolean => typeof w === 'boolean');
    if (known.length === wiring.length) return this.servedFor(caller, options, candidates, known);
    return Promise.all(wiring.map((w) => Promise.resolve(w))).then((wired) => this.servedFor(caller, options, candidates, wired));
  }

  /** The tools a level may be served, in catalogue order (fixed per level). */
  private candidatesOf(level: Caller['tool_level']): readonly ServerTool[] {
    let candidates = this.candidatesByLevel.get(level);
    if (!candidates) {
      const allowed = allowedTools(level);
      candidates = this.all.filter((t) => allowed.has(t.name));
      this.candidatesByLevel.set(level, candidates);
    }
    return candidates;
  }

  private servedFor(caller: Caller, options: { subAgent: boolean }, candidates: readonly ServerTool[], wired: readonly boolean[]): ServedCatalogue {
    let key = `${caller.tool_level}:${options.subAgent ? 'sub' : 'top'}:`;
    for (const w of wired) key += w ? '1' : '0';
    let served = this.servedBy.get(key);
    if (!served) {
      const tools = candidates.filter((_, i) => wired[i]);
      const definitions = Object.freeze(tools.filter((t) => !(options.subAgent && t.topLevelOnly)).map((t) => deepFreeze(t.definition(caller))));
      served = Object.freeze({ tools: new Map(tools.map((t) => [t.name, t])), definitions, definitionsJson: JSON.stringify(definitions) });
      this.servedBy.set(key, served);
    }
    return served;
  }
}

/** A definition shared by every request of a level: nothing may change it under another request. */
function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) deepFreeze(v as object);
  Object.freeze(value);
  return value;
}
