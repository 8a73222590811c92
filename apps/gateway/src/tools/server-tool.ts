import type { Caller } from '../auth/identity.js';
import type { Workspace } from '../sessions/workspace.js';
import type { ToolResult } from './tool-result.js';

/** The names of Drael's tools (spec 01 catalogue + spec 04 spawn_agent). */
export const TOOL_NAMES = ['run_code', 'web_search', 'web_fetch', 'generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

// spec 01: six tools (seven with spawn_agent) under a hard ceiling of eight.
export const MAX_CATALOGUE_TOOLS = 8;

/** What the model sees of a tool: an OpenAI function tool. */
export interface FunctionToolDefinition {
  type: 'function';
  function: { name: ToolName; description: string; parameters: Record<string, unknown> };
}

/** Everything a tool call may need from the request that made it. */
export interface ToolContext {
  readonly caller: Caller;
  /** Where the request's files live: the X-Drael-Session session, or the request's own workspace. */
  readonly workspace: Workspace;
  readonly requestId: string;
  /** Aborted when the client goes away: a tool stops its work and gives back what it holds. */
  readonly signal: AbortSignal;
  /** Idempotency base for holds: unique per tool call. */
  readonly callId: string;
  /** This call's place among the calls of the same tool in its turn (1 for the first): for per-turn caps. */
  readonly ordinal: number;
  /** Starts sub-agents: given only to a request's own loop, never to a sub-agent's (spec 04). */
  readonly subAgents?: SubAgentRunner;
}

/** spec 04's progress frames of a sub-agent, streamed to the client inside the delta. */
export type SubAgentFrame =
  | { event: 'subagent_started'; id: string; role: string; task: string }
  | { event: 'subagent_done'; id: string; role: string; ok: boolean; preview: string };

/** What a child loop is: who it runs as, its brief and task, its turn and token bounds. */
export interface SubAgentSpec {
  readonly id: string;
  readonly caller: Caller;
  readonly brief: string;
  readonly task: string;
  readonly maxTurns: number;
  readonly maxTokens: number;
}

/** A child's end: its answer, or why there is none. */
export type SubAgentAnswer = { readonly ok: true; readonly content: string } | { readonly ok: false; readonly reason: 'cost_ceiling' | 'failed' };

/** The turn loop's side of a sub-agent: the loop runs children, the tool decides which and how many. */
export interface SubAgentRunner {
  /** The request's spend (parent and children together) has reached its cost ceiling. */
  readonly ceilingReached: boolean;
  frame(frame: SubAgentFrame): Promise<void>;
  run(child: SubAgentSpec): Promise<SubAgentAnswer>;
}

/**
 * One tool adapter: its definition for the model, whether its provider is wired (a tool with no
 * provider behind it is not served, spec 01), and its execution. `run` never throws for a
 * failure of its provider: it answers `ok: false` and why. The arguments come from the model
 * and are untrusted JSON. Which key tool levels are served it is not the tool's to say: the one
 * mapping is tool-levels.ts.
 */
export interface ServerTool {
  readonly name: ToolName;
  /** Offered to a request's own loop only, never to a sub-agent; a sub-agent's forged call still reaches `run`. */
  readonly topLevelOnly?: boolean;
  /** The tool streams its own progress frames: no tool_started/tool_done card for its calls. */
  readonly ownFrames?: boolean;
  /**
   * What the model is shown. It may depend on the caller's tool level and nothing else of the
   * caller: the catalogue serves one definition per level (ToolCatalogue.served caches it).
   */
  definition(caller: Pick<Caller, 'tool_level'>): FunctionToolDefinition;
  /**
   * Whether its provider is wired: known at once when the answer is fresh (most requests, so
   * deciding the catalogue costs no promise), or a promise when a probe has to be asked.
   */
  isWired(): boolean | Promise<boolean>;
  /** The result as JSON fields, or as one text (each cut at 8 KiB with the cut stated, tool-result.ts). */
  run(args: unknown, ctx: ToolContext): Promise<ToolResult | string>;
}
