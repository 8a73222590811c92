import type { KeyIdentity, ToolLevel } from '@drael/contracts';
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

/** Who is calling: the key's identity (account = sandbox tenant, tool level, plan). */
export type Caller = Pick<KeyIdentity, 'account_id' | 'tool_level' | 'plan'>;

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
}

/**
 * One tool adapter: its definition for the model, whether its provider is wired (a tool with no
 * provider behind it is not served, spec 01), and its execution. `run` never throws for a
 * failure of its provider: it answers `ok: false` and why. The arguments come from the model
 * and are untrusted JSON.
 */
export interface ServerTool {
  readonly name: ToolName;
  /** The lowest key tool level that may be served this tool (spec 04). */
  readonly minLevel: ToolLevel;
  definition(caller: Caller): FunctionToolDefinition;
  isWired(): Promise<boolean>;
  run(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}
