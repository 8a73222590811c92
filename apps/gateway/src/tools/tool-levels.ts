import { levelAtLeast, TOOL_LEVELS, type ToolLevel } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import type { ToolName } from './server-tool.js';

/**
 * A key's tool level → the tools it may be served (spec 04, spec/README "Tool level"): `none`
 * serves no executed tool; `l1_http` the network-read tools (search, fetch over HTTP, the paid
 * HTTP providers) and spawn_agent with read-only roles; `l3_shell` adds run_code; `l4_browser`
 * adds real-browser rendering for web_fetch. Each level includes the ones before it.
 * This is the one place the mapping lives; the plan then decides what a served tool may cost.
 */
const LEVEL_TOOLS: Record<ToolLevel, readonly ToolName[]> = {
  none: [],
  l1_http: ['web_search', 'web_fetch', 'generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent'],
  l3_shell: ['run_code', 'web_search', 'web_fetch', 'generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent'],
  l4_browser: ['run_code', 'web_search', 'web_fetch', 'generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent'],
};

// Built once: a key's level is looked up on every catalogue-mode request.
const LEVEL_SETS = new Map(Object.entries(LEVEL_TOOLS).map(([level, tools]) => [level as ToolLevel, new Set(tools) as ReadonlySet<ToolName>]));

export function allowedTools(level: ToolLevel): ReadonlySet<ToolName> {
  return LEVEL_SETS.get(level) ?? new Set();
}

// The order of levels is one definition in packages/contracts, shared with agent-run (hosted agents' tools).
export { levelAtLeast };

/** The lower of two levels: a sub-agent never gets more than the key that spawned it. */
export function lowerLevel(a: ToolLevel, b: ToolLevel): ToolLevel {
  return TOOL_LEVELS.indexOf(a) <= TOOL_LEVELS.indexOf(b) ? a : b;
}

/**
 * The render mode a key's page fetches get (spec 04): the fetch service's `auto` (HTTP, then a real
 * browser when the page needs one) from l4_browser on, plain HTTP below. Catalogue web_fetch and
 * POST /v1/tools/fetch both ask this.
 */
export function fetchRenderFor(level: ToolLevel): 'auto' | 'http' {
  return levelAtLeast(level, 'l4_browser') ? 'auto' : 'http';
}

/** What a key does with sessions: `read` lists, downloads and deletes; `write` uploads a file. */
export type SessionAccess = 'read' | 'write';

/** For each access, the tools whose service gives it: the tools whose results land in a session (run_code's workspace, generate_image's pictures), and the one that runs what is written there. */
const SESSION_TOOLS: Record<SessionAccess, readonly ToolName[]> = { read: ['run_code', 'generate_image'], write: ['run_code'] };

/**
 * Sessions (/v1/sessions, spec 01) by the key's level. A session holds what its tools left, so a
 * key served none of them (`none`) has no business there: it neither reads what code left nor
 * takes the account's session places. Listing, reading and deleting come with any tool that puts
 * files in a session (l1_http on: generate_image tells the user to download its picture); writing
 * a file plants input for code that runs there later, so it needs the level that runs code
 * (l3_shell on). 403 tool_not_allowed otherwise, as the tool routes answer.
 */
export function assertSessionAccess(level: ToolLevel, access: SessionAccess): void {
  const tools = SESSION_TOOLS[access];
  const allowed = allowedTools(level);
  if (tools.some((t) => allowed.has(t))) return;
  const least = TOOL_LEVELS.find((l) => tools.some((t) => allowedTools(l).has(t))) ?? 'l3_shell';
  const what = access === 'write' ? 'Writing a session file' : 'Sessions';
  throw new ApiError('tool_not_allowed', `${what} needs tool level ${least} or higher; this key has ${level}`);
}

/**
 * A standalone tool route (/v1/tools/search, /v1/tools/fetch) runs the same tool the catalogue
 * serves, so the key's level decides it the same way: a key whose level does not serve the tool
 * is refused (403 tool_not_allowed) before anything is sent.
 */
export function assertToolAllowed(level: ToolLevel, tool: ToolName): void {
  if (allowedTools(level).has(tool)) return;
  const least = TOOL_LEVELS.find((l) => allowedTools(l).has(tool)) ?? 'l1_http';
  throw new ApiError('tool_not_allowed', `${tool} needs tool level ${least} or higher; this key has ${level}`);
}
