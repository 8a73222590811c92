import { KeyedJsonPostRoute, type HotCall, type HotRouteDeps } from '../../http/hot-route.js';
import { writeJsonResponse } from '../../http/json-response.js';
import { validateBody } from '../../openai/validate.js';
import { SearchToolRequestSchema } from './search-tool.schema.js';
import { SearchToolService } from './search-tool.service.js';

/**
 * POST /v1/tools/search served ahead of Fastify and Nest: an uncached search's budget is 10 % over
 * SearXNG itself (issue 5), and Fastify's and Nest's chains measured about 1.5 ms of it per
 * request (bench/search/README.md). Same validation, service and answer as SearchToolController.
 */
export function searchToolRoute(deps: HotRouteDeps, search: SearchToolService): KeyedJsonPostRoute {
  return new KeyedJsonPostRoute('/v1/tools/search', deps, async (call: HotCall) => {
    const answer = await search.search(validateBody(SearchToolRequestSchema, call.body), call.identity);
    if (answer.serverTiming) call.head['server-timing'] = answer.serverTiming;
    writeJsonResponse(call.res, 200, answer.body, call.head);
  });
}
