import { levelAtLeast, TOOL_LEVELS, type ToolLevel } from '@drael/contracts';
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
