import { MAX_SEARCH_LIMIT } from '@drael/contracts';
import type { WebSearchTool } from '../responses.schema.js';
import { EngineRefusal, hostAllowed, pickSearchEngine } from './engines.js';
import { cutText } from '../../tools/tool-result.js';
import { failedOutcome, failedOutcomeOf, type HostedCallContext, type ToolOutcome } from './tool-outcome.js';
import type { WebToolsPort } from './web-tools.port.js';

// How many results reach the model per search_context_size.
const RESULTS_FOR_CONTEXT = { low: 3, medium: 5, high: 10 } as const;

/**
 * One web_search call: the model's own query (spec 02: never a copy of the user's message) on the
 * engine the constraints allow. An empty search is a valid answer (found: false), not an error
 * and not a reason to try another engine.
 */
export async function runWebSearch(query: string, declaration: WebSearchTool, ctx: HostedCallContext, web: WebToolsPort): Promise<ToolOutcome> {
  const engine = pickSearchEngine(declaration.engine, { allowedDomains: ctx.allowedDomains, toolLevel: ctx.toolLevel });
  if (engine instanceof EngineRefusal) return failedOutcome(engine.code, engine.message);

  const wanted = RESULTS_FOR_CONTEXT[declaration.search_context_size];
  const filtering = ctx.allowedDomains.length > 0;
  let reply;
  try {
    // With a domain filter ask for the most the service gives, so enough survive the filter.
    reply = await web.search({ query, limit: filtering ? MAX_SEARCH_LIMIT : wanted }, ctx);
  } catch (err) {
    return failedOutcomeOf(err);
  }
  if (!reply.ok) return failedOutcome(reply.code, reply.reason);

  const kept = reply.results.filter((r) => hostAllowed(hostOf(r.url), ctx.allowedDomains)).slice(0, wanted);
  const results = kept.map((r) => ({ title: r.title, url: r.url, snippet: cutText(r.snippet).text, page_age: r.page_age }));
  if (results.length === 0) {
    const note = filtering
      ? `The search engine was queried; nothing matched inside the allowed domains (${ctx.allowedDomains.join(', ')}).`
      : 'The search engine was queried and holds nothing for this query.';
    return { forModel: { ok: true, found: false, query, note, results: [] }, sources: [], itemFields: { results: [] } };
  }
  return {
    forModel: { ok: true, found: true, query, results },
    sources: results.map((r) => ({ url: r.url, title: r.title })),
    itemFields: { results: results.map((r) => ({ type: 'url', url: r.url, title: r.title })) },
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
