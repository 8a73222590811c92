// bench/search: POST /v1/tools/search latency at the gateway.
//   - cached: the same search repeated (served from the search service's Redis cache)
//   - uncached: unique searches through gateway → NATS → search service → SearXNG, interleaved
//     with the same kind of searches sent straight to SearXNG, in the same run; ratio printed.
// Verification is off (SEARCH_VERIFY=false), as the target is stated for. Loopback only.
// Needs: NATS, Redis, Postgres (billing, for the API key), built apps and packages (pnpm build).
// Starts the local searx itself (infra/searx).
// Usage: node bench/search/run.mjs [--cached N] [--uncached N]
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CACHED_N = Math.min(arg('cached', 300), 2000);
const UNCACHED_N = Math.min(arg('uncached', 60), 300);
const WARMUP = 10;
const repo = fileURLToPath(new URL('../..', import.meta.url));
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const fmt = (ms) => `${ms.toFixed(2)} ms`;

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

execFileSync('bash', [`${repo}/infra/searx/start-local.sh`], { stdio: 'inherit' });
const prefix = `bench-${randomBytes(4).toString('hex')}`;
// test-support starts the built apps as production runs them; its gateway also brings up billing
// and makes an API key when the gateway asks for one.
const { startGatewayProcess, startServiceProcess } = await import(`${repo}/packages/test-support/dist/index.js`);
const search = await startServiceProcess('search', {
  NATS_URL,
  DRAEL_NATS_PREFIX: prefix,
  SEARXNG_URL,
  REDIS_URL,
  SEARCH_CACHE_PREFIX: `bench:${prefix}:`,
  SEARCH_CACHE_TTL_S: '120',
  SEARCH_ONION_ENGINES: 'fixture-onion',
  SEARCH_VERIFY: 'false',
  LOG_LEVEL: 'warn',
});
const gateway = await startGatewayProcess({ NATS_URL, DRAEL_NATS_PREFIX: prefix, DRAEL_BACKEND_SERVICES: 'search', LOG_LEVEL: 'warn' });
const stop = async () => {
  await gateway.stop();
  await search.stop();
};
const base = gateway.url;
const auth = gateway.authHeaders ?? {};

const viaGateway = async (query) => {
  const r = await fetch(`${base}/v1/tools/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ query, max_results: 10 }),
  });
  const body = await r.json();
  if (r.status !== 200) throw new Error(`gateway answered ${r.status}: ${JSON.stringify(body)}`);
  return body;
};
const direct = async (query) => {
  const r = await fetch(`${SEARXNG_URL}/search?${new URLSearchParams({ q: query, format: 'json', categories: 'general' })}`);
  const body = await r.json();
  if (r.status !== 200) throw new Error(`searx answered ${r.status}`);
  return body;
};

// cached
const cachedQuery = `drael zznonce-${prefix}-cached`;
await viaGateway(cachedQuery);
for (let i = 0; i < WARMUP; i++) await viaGateway(cachedQuery);
const cached = [];
for (let i = 0; i < CACHED_N; i++) {
  let body;
  cached.push(await timed(async () => (body = await viaGateway(cachedQuery))));
  if (!body.cached) throw new Error('expected a cached answer');
}

// the gateway's own floor on this machine right now: an HTTP round trip that does no work
const floor = [];
for (let i = 0; i < CACHED_N; i++) floor.push(await timed(async () => (await fetch(`${base}/healthz`)).arrayBuffer()));
// and an authenticated /v1 route that calls no service (API key check and rate limit only)
const authFloor = [];
for (let i = 0; i < CACHED_N; i++) authFloor.push(await timed(async () => (await fetch(`${base}/v1/models`, { headers: auth })).arrayBuffer()));

// uncached, interleaved with direct SearXNG calls
for (let i = 0; i < WARMUP; i++) {
  await direct(`drael zznonce-${prefix}-wd${i}`);
  await viaGateway(`drael zznonce-${prefix}-wg${i}`);
}
const gw = [];
const sx = [];
for (let i = 0; i < UNCACHED_N; i++) {
  const order = i % 2 === 0;
  const runGw = async () => {
    let body;
    gw.push(await timed(async () => (body = await viaGateway(`drael zznonce-${prefix}-g${i}`))));
    if (body.cached || body.results.length === 0) throw new Error('expected an uncached answer with results');
  };
  const runSx = async () => sx.push(await timed(() => direct(`drael zznonce-${prefix}-s${i}`)));
  if (order) {
    await runGw();
    await runSx();
  } else {
    await runSx();
    await runGw();
  }
}

const mGw = median(gw);
const mSx = median(sx);
console.log(`bench/search  (${new Date().toISOString()}, node ${process.version}, load ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')})`);
console.log(`cached   at the gateway: median ${fmt(median(cached))}, p90 ${fmt(pct(cached, 90))}  (n=${CACHED_N}; target ≤ 2 ms)`);
console.log(`(gateway GET /healthz  : median ${fmt(median(floor))}, p90 ${fmt(pct(floor, 90))}: the HTTP floor under the current load)`);
console.log(`(gateway GET /v1/models: median ${fmt(median(authFloor))}, p90 ${fmt(pct(authFloor, 90))}: the floor of an authenticated /v1 route)`);
console.log(`uncached at the gateway: median ${fmt(mGw)}, p90 ${fmt(pct(gw, 90))}  (n=${UNCACHED_N}, verification off)`);
console.log(`SearXNG direct         : median ${fmt(mSx)}, p90 ${fmt(pct(sx, 90))}  (n=${UNCACHED_N})`);
console.log(`uncached / SearXNG     : ${(mGw / mSx).toFixed(3)}×  (+${(((mGw - mSx) / mSx) * 100).toFixed(1)}%, +${fmt(mGw - mSx)}; target ≤ 1.10×)`);
await stop();
process.exit(0);
