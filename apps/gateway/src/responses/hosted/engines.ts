import type { ToolLevel } from '@drael/contracts';
import { levelAtLeast } from '../../tools/tool-levels.js';

/**
 * Engines behind the hosted web tools, each with what it can guarantee. spec 02: "an engine that
 * cannot satisfy a requested constraint is not used for that call" and "a tool that cannot run
 * under your policy fails before it is dispatched". So the engine is chosen per call from the
 * request's constraints, and when none fits the call fails with a typed code instead of running
 * with fewer constraints.
 */
export interface EngineConstraints {
  /** web_search filters.allowed_domains (web_fetch inherits them). */
  readonly allowedDomains: readonly string[];
  /** The key's tool level (spec 04). */
  readonly toolLevel: ToolLevel;
}

export interface SearchEngine {
  readonly name: string;
  /** The lowest tool level allowed to use it. */
  readonly minLevel: ToolLevel;
  /** Can it keep every returned source inside allowed_domains? */
  readonly domainFilter: boolean;
}

export interface FetchEngine {
  readonly name: string;
  readonly minLevel: ToolLevel;
  /** fetch.page.v1's render mode. */
  readonly render: 'http' | 'browser' | 'auto';
}

// The self-hosted SearXNG behind search.query.v1; results outside allowed_domains are dropped before
// the model sees them, so it satisfies the domain filter.
export const SEARCH_ENGINES: readonly SearchEngine[] = [{ name: 'drael', minLevel: 'l1_http', domainFilter: true }];

// spec 04: l1_http reads the network over HTTP; real-browser rendering needs l4_browser. Listed in
// order of preference for `auto`: the service's own auto (HTTP first, browser fallback) when the key
// may use the browser, plain HTTP otherwise.
export const FETCH_ENGINES: readonly FetchEngine[] = [
  { name: 'auto', minLevel: 'l4_browser', render: 'auto' },
  { name: 'http', minLevel: 'l1_http', render: 'http' },
  { name: 'browser', minLevel: 'l4_browser', render: 'browser' },
];

export const SEARCH_ENGINE_NAMES = ['auto', ...SEARCH_ENGINES.map((e) => e.name)];
export const FETCH_ENGINE_NAMES = FETCH_ENGINES.map((e) => e.name);

export class EngineRefusal {
  constructor(
    readonly code: 'tool_level_insufficient' | 'engine_cannot_filter_domains',
    readonly message: string,
  ) {}
}

// The key's tool level order lives in one place (tools/tool-levels.ts).
const levelAllows = levelAtLeast;

/** The search engine for one call, or why no engine may run it. */
export function pickSearchEngine(requested: string, c: EngineConstraints, engines = SEARCH_ENGINES): SearchEngine | EngineRefusal {
  const candidates = requested === 'auto' ? engines : engines.filter((e) => e.name === requested);
  const permitted = candidates.filter((e) => levelAllows(c.toolLevel, e.minLevel));
  if (permitted.length === 0) {
    return new EngineRefusal('tool_level_insufficient', `web_search needs tool level l1_http or higher; this key has ${c.toolLevel}`);
  }
  const fit = c.allowedDomains.length > 0 ? permitted.filter((e) => e.domainFilter) : permitted;
  return fit[0] ?? new EngineRefusal('engine_cannot_filter_domains', `no search engine here can keep results inside allowed_domains`);
}

/** The fetch engine for one call, or why no engine may run it. */
export function pickFetchEngine(requested: string, c: EngineConstraints, engines = FETCH_ENGINES): FetchEngine | EngineRefusal {
  // `auto` may fall back to any engine the key is allowed; a named engine is that engine or nothing.
  const candidates = requested === 'auto' ? engines : engines.filter((e) => e.name === requested);
  const permitted = candidates.filter((e) => levelAllows(c.toolLevel, e.minLevel));
  return (
    permitted[0] ??
    new EngineRefusal(
      'tool_level_insufficient',
      requested === 'auto'
        ? `web_fetch needs tool level l1_http or higher; this key has ${c.toolLevel}`
        : `web_fetch engine '${requested}' needs tool level ${candidates[0]?.minLevel ?? 'l1_http'}; this key has ${c.toolLevel}`,
    )
  );
}

/** True when `host` is one of the allowed domains or a subdomain of one. */
export function hostAllowed(host: string, allowedDomains: readonly string[]): boolean {
  if (allowedDomains.length === 0) return true;
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowedDomains.some((d) => {
    const domain = d
      .toLowerCase()
      .replace(/^\*?\./, '')
      .replace(/\.$/, '');
    return h === domain || h.endsWith(`.${domain}`);
  });
}

/** The host of an allowed_domains entry given as a bare domain or a URL. */
export function normalizeDomain(entry: string): string {
  const trimmed = entry.trim();
  try {
    return new URL(/^[a-z]+:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`).hostname;
  } catch {
    return trimmed.toLowerCase();
  }
}
