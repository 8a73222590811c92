import type { FunctionTool } from '../responses.schema.js';
import type { ToolOutcome } from './tool-outcome.js';

// Definitions one tool_search call may load at most, so a vague query cannot flood the model's view.
const MAX_LOADED_PER_SEARCH = 5;

/**
 * Platform-executed tool_search (spec 02): matches the model's query against the request's
 * deferred functions (defer_loading: true) by name and description words, and returns the
 * definitions it loads. Nothing matching is a valid, empty answer.
 */
export function runToolSearch(query: string, deferred: ReadonlyMap<string, FunctionTool>): ToolOutcome & { loaded: FunctionTool[] } {
  const terms = wordsOf(query);
  const scored = [...deferred.values()]
    .map((fn) => {
      const nameWords = wordsOf(fn.name);
      const descWords = wordsOf(fn.description ?? '');
      let score = 0;
      for (const t of terms) {
        if (nameWords.has(t)) score += 3;
        else if (t.length >= 4 && [...nameWords].some((w) => w.length >= 4 && (w.startsWith(t) || t.startsWith(w)))) score += 2;
        if (descWords.has(t)) score += 1;
      }
      if (fn.name.toLowerCase() === query.trim().toLowerCase()) score += 10;
      return { fn, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, MAX_LOADED_PER_SEARCH);
  const loaded = scored.map((s) => s.fn);
  const definitions = loaded.map(outputDefinitionOf);
  if (loaded.length === 0) {
    return {
      loaded,
      forModel: { ok: true, found: false, query, note: 'No further tools match this query.', loaded_tools: [] },
      sources: [],
      itemFields: { tools: [] },
    };
  }
  return {
    loaded,
    forModel: { ok: true, found: true, query, loaded_tools: loaded.map((f) => f.name), note: 'These tools can now be called.' },
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
