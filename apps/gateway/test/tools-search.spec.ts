import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startGatewayProcess, startServiceProcess, testPrefix, type GatewayProcess, type ServiceProcess } from '@drael/test-support';

// POST /v1/tools/search end to end: gateway → NATS → the real search service → the real searx
// (infra/searx/settings.local.yml) over its fixture corpora.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';

interface Stack {
  gateway: GatewayProcess;
  search: ServiceProcess;
}

async function startStack(searchEnv: Record<string, string>): Promise<Stack> {
  const prefix = testPrefix('gw-search');
  const search = await startServiceProcess('search', {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    SEARXNG_URL,
    SEARCH_CACHE_PREFIX: `test:${prefix}:`,
    SEARCH_ONION_ENGINES: 'fixture-onion',
    SEARCH_VERIFY: 'false',
    ...searchEnv,
  });
  const gateway = await startGatewayProcess({ NATS_URL, DRAEL_NATS_PREFIX: prefix, DRAEL_BACKEND_SERVICES: 'search', LOG_LEVEL: 'warn' });
  return { gateway, search };
}

let main: Stack;
let degraded: Stack;
// the shared cache holds answers for 3 s only: the gateway's memo must not keep them longer
let shortLived: Stack;

beforeAll(async () => {
  execFileSync('bash', [fileURLToPath(new URL('../../../infra/searx/start-local.sh', import.meta.url))], { stdio: 'inherit', timeout: 60_000 });
  // the second stack: searx unreachable, and no onion engine pinned; its search service is stopped by the last test
  const deadSearx = `http://127.0.0.1:${await freePort()}`;
  [main, degraded, shortLived] = await Promise.all([startStack({}), startStack({ SEARXNG_URL: deadSearx, SEARCH_ONION_ENGINES: '' }), startStack({ SEARCH_CACHE_TTL_S: '3' })]);
  // each stack boots a search service, a billing service and a gateway: slow on a busy machine
}, 180_000);

afterAll(async () => {
  for (const stack of [main, degraded, shortLived]) {
    await stack?.gateway.stop();
    await stack?.search.stop();
  }
});

const post = (stack: Stack, body: unknown) =>
  fetch(`${stack.gateway.url}/v1/tools/search`, {
    method: 'POST',
    // every /v1 route needs a key: test-support's gateway starts billing and makes one (authHeaders)
    headers: { 'content-type': 'application/json', ...(stack.gateway as { authHeaders?: Record<string, string> }).authHeaders },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

interface SearchBody {
  results: { title: string; url: string; snippet: string; source: string; verified: boolean; page_age: string | null }[];
  provider: string;
  found: boolean;
  note?: string;
  took_ms: number;
  cached: boolean;
  coverage: number;
  sources_tried: string[];
  degraded: string[];
  intent: string;
}
interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function okBody(stack: Stack, body: unknown): Promise<SearchBody> {
  const r = await post(stack, body);
  const json = (await r.json()) as SearchBody;
  expect(r.status, JSON.stringify(json)).toBe(200);
  return json;
}

async function expectError(r: Response, status: number, type: string, code: string, param?: string | null) {
  expect(r.status).toBe(status);
  const body = (await r.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type, code, message: expect.any(String) });
  if (param !== undefined) expect(body.error.param).toBe(param);
}

describe('POST /v1/tools/search', () => {
  it('answers the spec 04 shape with provider drael', async () => {
    const body = await okBody(main, { query: 'drael', max_results: 3 });
    expect(body).toMatchObject({ provider: 'drael', cached: false, coverage: 1, degraded: [], found: true, intent: 'general' });
    expect(body.took_ms).toEqual(expect.any(Number));
    expect([...body.sources_tried].sort()).toEqual(['fixture-flaky', 'fixture-news', 'fixture-web']);
    expect(body.results).toHaveLength(3);
    for (const r of body.results) {
      expect(Object.keys(r).sort()).toEqual(['page_age', 'snippet', 'source', 'title', 'url', 'verified']);
      expect(r.verified).toBe(false); // verification is off in this stack
      expect(body.sources_tried).toContain(r.source);
      if (r.page_age !== null) expect(r.page_age).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('says cached:true for the same search again', async () => {
    const first = await okBody(main, { query: 'drael news cache', max_results: 2 });
    const again = await okBody(main, { query: 'Drael  News cache', max_results: 2 });
    expect(first.cached).toBe(false);
    expect(again.cached).toBe(true);
    expect(again.results).toEqual(first.results);
  });

  it('intent comes from the classifier', async () => {
    expect((await okBody(main, { query: 'curs BNR euro azi', max_results: 3, freshness: 'day' })).intent).toBe('currency');
  });

  it('empty is 200 with found:false and a note, not an error', async () => {
    const body = await okBody(main, { query: 'zzempty gateway' });
    expect(body).toMatchObject({ found: false, results: [], coverage: 1, degraded: [] });
    expect(body.note).toMatch(/holds nothing/);
  });

  it('partly failed: results with degraded and coverage', async () => {
    const body = await okBody(main, { query: 'drael zzfail-flaky gateway' });
    expect(body.degraded).toEqual(['fixture-flaky']);
    expect(body.coverage).toBeCloseTo(0.667, 3);
  });

  it('every engine failed → 503 search_unavailable (server_error)', async () => {
    await expectError(await post(main, { query: 'drael zzfail-all' }), 503, 'server_error', 'search_unavailable');
  });

  it('freshness maps to the engines time range', async () => {
    const titles = async (freshness: string) => (await okBody(main, { query: 'zzfresh', freshness })).results.map((r) => r.title);
    expect(await titles('day')).toEqual(['zzfresh story from this hour']);
    expect(await titles('week')).toHaveLength(2);
    expect(await titles('month')).toHaveLength(3);
    expect(await titles('year')).toHaveLength(4);
  });

  it('onion: only .onion results from the pinned engine', async () => {
    const body = await okBody(main, { query: 'zzhidden', onion: true });
    expect(body.sources_tried).toEqual(['fixture-onion']);
    expect(body.results.map((r) => new URL(r.url).hostname.endsWith('.onion'))).toEqual([true, true]);
  });

  it('onion where no onion engine is configured → typed error, not the clear web', async () => {
    await expectError(await post(degraded, { query: 'zzhidden', onion: true }), 503, 'service_unavailable_error', 'onion_search_unavailable');
  });

  describe('max_results', () => {
    it('honours 1 and 20, defaults to 10', async () => {
      expect((await okBody(main, { query: 'zzbulk', max_results: 1 })).results).toHaveLength(1);
      expect((await okBody(main, { query: 'zzbulk', max_results: 20 })).results).toHaveLength(20);
      expect((await okBody(main, { query: 'zzbulk' })).results).toHaveLength(10);
    });
    it.each([0, 21, 2.5, '5', null])('%s → 400 invalid_request_error naming max_results', async (max_results) => {
      await expectError(await post(main, { query: 'zzbulk', max_results }), 400, 'invalid_request_error', 'invalid_request', 'max_results');
    });
  });

  describe('bad input → 400 in the OpenAI envelope', () => {
    it.each([
      ['empty query', { query: '' }, 'query'],
      ['blank query', { query: '  ' }, 'query'],
      ['10 KB query', { query: 'x'.repeat(10 * 1024) }, 'query'],
      ['query not a string', { query: 42 }, 'query'],
      ['no query', {}, 'query'],
      ['unknown freshness', { query: 'x', freshness: 'decade' }, 'freshness'],
      ['onion not a boolean', { query: 'x', onion: 'yes' }, 'onion'],
    ])('%s', async (_name, body, param) => {
      await expectError(await post(main, body), 400, 'invalid_request_error', 'invalid_request', param);
    });
    it('a body that is not JSON', async () => {
      await expectError(await post(main, '{"query": '), 400, 'invalid_request_error', 'invalid_json');
    });
  });

  it('SearXNG down → 503 search_unavailable (server_error)', async () => {
    await expectError(await post(degraded, { query: 'drael' }), 503, 'server_error', 'search_unavailable');
  });

  it('search service down → 503 search_unavailable (server_error)', async () => {
    await degraded.search.stop();
    await expectError(await post(degraded, { query: 'drael' }), 503, 'server_error', 'search_unavailable');
  });
});

describe('POST /v1/tools/search: served ahead of Fastify (search-tool.route.ts) and by the Nest controller alike', () => {
  // The plain path with a JSON type is served by the hot route; a query string or a +json type
  // goes through Fastify and Nest. Both ways must answer the same head and body.
  const via = (path: string, type: string, body: string, requestId: string) =>
    fetch(`${main.gateway.url}${path}`, {
      method: 'POST',
      headers: { ...(main.gateway as { authHeaders?: Record<string, string> }).authHeaders, 'content-type': type, 'x-request-id': requestId },
      body,
    });
  const ways = [
    ['/v1/tools/search', 'application/json'],
    ['/v1/tools/search?via=nest', 'application/vnd.drael+json'],
  ] as const;

  it('a search: same status, headers and fields', async () => {
    const answers = [];
    for (const [i, [path, type]] of ways.entries()) {
      const r = await via(path, type, JSON.stringify({ query: 'drael both ways', max_results: 2 }), `req-search-way-${i}`);
      const body = (await r.json()) as SearchBody;
      expect(r.status, JSON.stringify(body)).toBe(200);
      expect(r.headers.get('x-request-id')).toBe(`req-search-way-${i}`);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(r.headers.get('x-ratelimit-limit-requests')).toBeTruthy();
      answers.push(body);
    }
    const [hot, nest] = answers as [SearchBody, SearchBody];
    expect(Object.keys(hot)).toEqual(Object.keys(nest));
    expect(hot.cached).toBe(false);
    expect(nest.cached).toBe(true); // the second way found the first way's answer
    expect(nest.results).toEqual(hot.results);
  });

  it("Server-Timing gives the search service's time and SearXNG's share, both ways in; none for an answer the gateway kept", async () => {
    for (const [i, [path, type]] of ways.entries()) {
      const body = JSON.stringify({ query: `drael server timing ${i}`, max_results: 2 });
      const first = await via(path, type, body, `req-timing-${i}`);
      expect(first.status).toBe(200);
      await first.text();
      const timing = first.headers.get('server-timing') ?? '';
      const [, search, searx] = /^search;dur=([\d.]+), searxng;dur=([\d.]+)$/.exec(timing) ?? [];
      expect(timing, timing).toMatch(/^search;dur=[\d.]+, searxng;dur=[\d.]+$/);
      expect(Number(searx)).toBeLessThanOrEqual(Number(search));
      // the same search again is the gateway's memo: no service, no SearXNG, no timing
      const again = await via(path, type, body, `req-timing-${i}-again`);
      expect(((await again.json()) as SearchBody).cached).toBe(true);
      expect(again.headers.get('server-timing')).toBeNull();
    }
  });

  it.each([
    ['bad input', '{"query": ""}', 400, 'invalid_request'],
    ['not JSON', '{"query": ', 400, 'invalid_json'],
  ])('%s: the same envelope both ways', async (_name, raw, status, code) => {
    for (const [path, type] of ways) {
      const r = await via(path, type, raw, 'req-search-bad');
      expect(r.headers.get('x-request-id')).toBe('req-search-bad');
      await expectError(r, status, 'invalid_request_error', code);
    }
  });

  it('no key: 401 both ways, before any search', async () => {
    for (const [path, type] of ways) {
      const r = await fetch(`${main.gateway.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify({ query: 'drael' }) });
      await expectError(r, 401, 'authentication_error', 'missing_api_key');
    }
  });
});

describe('POST /v1/tools/search: cached answers kept by the gateway (search-answer.memo.ts)', () => {
  it('a cached answer is served for as long as the shared cache holds it, and not after', async () => {
    const query = { query: 'drael memo expiry', max_results: 2 };
    const first = await okBody(shortLived, query);
    expect(first.cached).toBe(false);
    const again = await okBody(shortLived, query);
    expect(again.cached).toBe(true);
    expect(again.results).toEqual(first.results);
    // SEARCH_CACHE_TTL_S=3 in this stack: past it, neither the service nor the gateway has the answer
    await new Promise((r) => setTimeout(r, 3_300));
    expect((await okBody(shortLived, query)).cached).toBe(false);
  });

  it('a failure is never kept: the same failing search fails again at the service', async () => {
    for (let i = 0; i < 2; i++) {
      await expectError(await post(shortLived, { query: 'drael zzfail-all memo' }), 503, 'server_error', 'search_unavailable');
    }
  });

  it('a search the service said is cached is answered by the gateway itself, the service down', async () => {
    const query = { query: 'drael memo service down', max_results: 3 };
    const first = await okBody(shortLived, query);
    await shortLived.search.stop();
    const again = await okBody(shortLived, query);
    expect(again).toMatchObject({ cached: true, found: first.found, results: first.results });
    // anything it was not told about still needs the service
    await expectError(await post(shortLived, { query: 'drael memo not seen' }), 503, 'server_error', 'search_unavailable');
  });
});
