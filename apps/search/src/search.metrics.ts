import type { SearchQueryReply } from '@drael/contracts';
import { metrics } from '@drael/metrics';

/** The search service's series (docs/operations.md). */
const queries = metrics.histogram({
  name: 'drael_search_query_duration_seconds',
  help: 'Search queries, by outcome (found, empty, degraded: found with some engines failing, failed, refused); its _count is the query count',
  labels: { outcome: ['found', 'empty', 'degraded', 'failed', 'refused'] },
});
const engineFailures = metrics.counter({
  name: 'drael_search_engine_failures_total',
  help: 'SearXNG engines that did not answer a query, by engine (names from the SearXNG settings)',
  labels: { engine: 50 },
});
const cache = metrics.counter({ name: 'drael_search_cache_lookups_total', help: 'Search cache lookups, by result (hit, miss)', labels: { result: ['hit', 'miss'] } });
const searx = metrics.histogram({ name: 'drael_search_searxng_duration_seconds', help: 'Time SearXNG took to answer one search request' });

function outcomeOf(reply: SearchQueryReply): string {
  if (!reply.ok) return 'failed';
  if (!reply.found) return 'empty';
  return reply.degraded.length > 0 ? 'degraded' : 'found';
}

/** Answers one query and records its outcome and duration. */
export async function measureQuery(run: () => Promise<SearchQueryReply>): Promise<SearchQueryReply> {
  const done = queries.time();
  let outcome = 'refused';
  try {
    const reply = await run();
    outcome = outcomeOf(reply);
    return reply;
  } finally {
    done({ outcome });
  }
}

export const recordEngineFailures = (engines: readonly string[]) => engines.forEach((engine) => engineFailures.inc({ engine }));
export const recordCacheLookup = (hit: boolean) => cache.inc({ result: hit ? 'hit' : 'miss' });
export const recordSearxLatency = (ms: number) => searx.observe({}, ms / 1000);
