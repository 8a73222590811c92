import type { FunctionTool } from '../responses.schema.js';
import { failedOutcome, type ToolOutcome } from './tool-outcome.js';

// Definitions one tool_search call may load at most, so a vague query cannot flood the model's view.
const MAX_LOADED_PER_SEARCH = 5;
// The model's query at most (a few keywords are asked for): a 1 MiB query held the loop 1.5 s
// against 128 tools, each call of up to 128 a response makes (audit).
const MAX_QUERY_CHARS = 1000;

/** A deferred function as tool_search matches it: its words, split once per tool set (see ToolSet.searchable). */
export interface SearchableTool {
  readonly fn: FunctionTool;
  readonly lowerName: string;
  readonly nameWords: ReadonlySet<string>;
  /** The name's words long enough to match a term by prefix. */
  readonly longNameWords: readonly string[];
  readonly descWords: ReadonlySet<string>;
}

/**
 * The deferred functions' words. Split on every call, 16 MiB of the client's descriptions cost
 * 1.27 s a call (audit), up to 128 calls a response; split once, a call only looks words up.
 */
export function searchableOf(deferred: ReadonlyMap<string, FunctionTool>): SearchableTool[] {
  return [...deferred.values()].map((fn) => {
    const nameWords = wordsOf(fn.name);
    return { fn, lowerName: fn.name.toLowerCase(), nameWords, longNameWords: [...nameWords].filter((w) => w.length >= 4), descWords: wordsOf(fn.description ?? '') };
  });
}

/**
 * Platform-executed tool_search (spec 02): matches the model's query against the request's
 * deferred functions (defer_loading: true) not loaded yet, by name and description words, and
 * returns the definitions it loads. Nothing matching is a valid, empty answer.
 */
export function runToolSearch(query: string, tools: readonly SearchableTool[], loaded: ReadonlyMap<string, FunctionTool>): ToolOutcome & { loaded: FunctionTool[] } {
  if (query.length > MAX_QUERY_CHARS) {
    return { ...failedOutcome('invalid_arguments', `tool_search's query may be at most ${MAX_QUERY_CHARS} characters; describe the tool you need in a few words`), loaded: [] };
  }
  const terms = wordsOf(query);
  const whole = query.trim().toLowerCase();
  const scored = tools
    .filter((tool) => !loaded.has(tool.fn.name))
    .map((tool) => {
      let score = 0;
      for (const t of terms) {
        if (tool.nameWords.has(t)) score += 3;
        else if (t.length >= 4 && tool.longNameWords.some((w) => w.startsWith(t) || t.startsWith(w))) score += 2;
        if (tool.descWords.has(t)) score += 1;
      }
      if (tool.lowerName === whole) score += 10;
      return { fn: tool.fn, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_LOADED_PER_SEARCH);
  const found = scored.map((s) => s.fn);
  const definitions = found.map(outputDefinitionOf);
  if (found.length === 0) {
    return {
      loaded: found,
      forModel: { ok: true, found: false, query, note: 'No further tools match this query.', loaded_tools: [] },
      sources: [],
      itemFields: { tools: [] },
    };
  }
  return {
    loaded: found,
    forModel: { ok: true, found: true, query, loaded_tools: found.map((f) => f.name), note: 'These tools can now be called.' },
    sources: [],
    itemFields: { tools: definitions },
  };
}

/** A function definition as tool_search_output carries it (the Responses tool shape). */
export function outputDefinitionOf(fn: FunctionTool): Record<string, unknown> {
  return {
    type: 'function',
    name: fn.name,
    description: fn.description ?? null,
    parameters: fn.parameters ?? { type: 'object', properties: {} },
    ...(typeof fn.strict === 'boolean' ? { strict: fn.strict } : {}),
  };
}

function wordsOf(text: string): Set<string> {
  return new Set(
    text
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      // Words of one or two letters (in, a, to) match everything and say nothing.
      .filter((w) => w.length > 2),
  );
}
