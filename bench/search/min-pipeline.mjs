// bench/search/min-pipeline.mjs: what the architecture's shape costs on this machine with no
// product code in it, beside Drael and SearXNG direct, interleaved in one run.
//
// The uncached search path is client → gateway (HTTP) → NATS → search service → SearXNG and back.
// "minimal" is that same shape with nothing else: a bare node:http server that forwards the JSON
// body as one nats.js request, and a bare nats.js responder that asks SearXNG (node:http, as the
// search service does), parses its JSON, keeps the first 10 results and answers. No Nest, no
// Fastify, no validation, no auth, no cache, no mapping. Whatever Drael adds above "minimal" is
// its own code; whatever "minimal" adds above SearXNG direct is the shape on this machine.
// Each of the three is timed per request; the paired figure takes SearXNG's share (timed inside
// the responder / the search service, the same way: from the request's start to its body's last
// byte) out of each request. Each answer also says how long its service's handler took (Drael's
// Server-Timing `search`, the responder's own), which splits the own time in two: inside the
// service's handler (its time less SearXNG's) and outside it (the HTTP front, NATS both ways, the
// service's message handling before and after its handler).
// Usage: node bench/search/min-pipeline.mjs [--n 100] [--warmup 4000] [--seed N] [--baseline /path/to/another/checkout]
// --warmup: unmeasured searches sent through each front first (default 4000, a few minutes:
// SearXNG answers ~30 a second here), so both are timed as a long-running process runs, with
// what each request runs optimised by V8; --warmup 10 is the ten rounds this bench used before
// 2026-12-05, which timed a fresh process's first few hundred requests.
// Profiling: SEARCH_NODE_ARGS / GATEWAY_NODE_ARGS (with CPU_PROF_DIR), as in run.mjs.
// --baseline adds a fourth kind, interleaved with the others: Drael as built in that checkout (its
// own bench/lib/search-stack.mjs (or bench/search/drael-search.mjs) and built apps, e.g. a `cp -al` copy of this tree taken before
// a change, with its dist folders copied for real), so a change is compared with its before in
// one run, under the same load.
// Needs: NATS, Redis, Postgres (billing, for Drael's API key), built apps (pnpm build).
import { stopOnSignal } from '../lib/ends-with-bench.mjs';
import { execFileSync, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startSearchStack } from '../lib/search-stack.mjs';
import { call } from './keepalive-call.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

/** The baseline tree's own starter: bench/lib/search-stack.mjs, or bench/search/drael-search.mjs in trees older than it. */
async function startBaselineSearch(repo, options) {
  try {
    return await (await import(`${repo}/bench/lib/search-stack.mjs`)).startSearchStack(options);
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    return (await import(`${repo}/bench/search/drael-search.mjs`)).startDraelSearch(options);
  }
}

const repo = fileURLToPath(new URL('../..', import.meta.url));
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';
const natsMod = `${repo}/packages/nats-rpc/node_modules/@nats-io/transport-node/lib/mod.js`;
const role = process.argv[2];
const subject = process.argv[3];

/** mulberry32: a small seeded generator, enough to shuffle an order reproducibly. */
function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A copy of `items` in a random order (Fisher-Yates). */
function shuffled(items, random) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function get(url, agent) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

if (role === 'responder') {
  // the search service's shape: one NATS subscription, one SearXNG call, one reply
  const { connect } = await import(natsMod);
  const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '') });
  const agent = new http.Agent({ keepAlive: true });
  nc.subscribe(subject, {
    queue: 'min',
    callback: (_err, msg) => {
      const received = performance.now();
      const req = msg.json();
      const asked = performance.now();
      const q = new URLSearchParams({ q: req.query, format: 'json', categories: 'general' });
      get(`${SEARXNG_URL}/search?${q}`, agent).then((r) => {
        const searxMs = performance.now() - asked;
        const results = JSON.parse(r.text).results.slice(0, req.limit);
        msg.respond(JSON.stringify({ ok: true, results, searx_ms: searxMs, took_ms: performance.now() - received }));
      });
    },
  });
  await nc.flush();
  process.send('ready');
} else if (role === 'front') {
  // the gateway's shape: an HTTP server that forwards the body as one NATS request
  const { connect } = await import(natsMod);
  const nc = await connect({ servers: NATS_URL.replace(/^nats:\/\//, '') });
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const reply = (await nc.request(subject, JSON.stringify({ query: body.query, limit: body.max_results }), { timeout: 10_000 })).json();
      const out = JSON.stringify({ results: reply.results, provider: 'minimal' });
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(out),
        'server-timing': `search;dur=${reply.took_ms}, searxng;dur=${reply.searx_ms}`,
      });
      res.end(out);
    });
  });
  srv.listen(0, '127.0.0.1', () => process.send(srv.address().port));
} else {
  const N = Math.min(numberOption('n', 100), 300);
  const WARMUP = numberOption('warmup', 4000);
  const WARMUP_IN_FLIGHT = 4;
  // The order of the kinds in each round is drawn from this seed (printed, so a run can be repeated).
  const seed = numberOption('seed', Math.floor(Math.random() * 2 ** 31));
  const random = seededRandom(seed);
  const baselineRepo = option('baseline', undefined);
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const fmt = (ms) => `${ms.toFixed(2)} ms`;

  // Everything started is stopped however the run ends (an error, Ctrl-C, timeout's SIGTERM): a
  // forked child left behind keeps the caller's output pipe open, and a shell waiting on it hangs.
  const started = [];
  const stopAll = stopOnSignal(async () => {
    for (const stop of started.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
  });
  try {
    execFileSync('bash', [`${repo}/infra/searx/start-local.sh`], { stdio: 'inherit' });
    const prefix = `bench-min-${randomBytes(4).toString('hex')}`;
    const minSubject = `${prefix}.min.search`;
    const responder = fork(fileURLToPath(import.meta.url), ['responder', minSubject]);
    started.push(() => responder.kill());
    await new Promise((r) => responder.once('message', r));
    const front = fork(fileURLToPath(import.meta.url), ['front', minSubject]);
    started.push(() => front.kill());
    const frontPort = await new Promise((r) => front.once('message', r));

    // SEARCH_NODE_ARGS / GATEWAY_NODE_ARGS (profiling) are read by startSearchStack.
    const drael = await startSearchStack({ natsUrl: NATS_URL, redisUrl: REDIS_URL, searxngUrl: SEARXNG_URL });
    started.push(() => drael.stop());
    const { gateway } = drael;
    const baseline = baselineRepo ? await startBaselineSearch(baselineRepo, { natsUrl: NATS_URL, redisUrl: REDIS_URL, searxngUrl: SEARXNG_URL }) : undefined;
    if (baseline) started.push(() => baseline.stop());

    // per kind: [the service's handler less SearXNG, everything outside the handler], per request
    const split = {};
    // one uncached search through an HTTP front: [wall, SearXNG's share]
    const through = async (kind, base, query, headers = {}) => {
      const t = performance.now();
      const r = await call(`${base}/v1/tools/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, max_results: 10 }),
      });
      const wall = performance.now() - t;
      if (r.status !== 200) throw new Error(`${base} answered ${r.status}: ${r.text}`);
      const body = JSON.parse(r.text);
      if (body.cached || body.results.length === 0) throw new Error('expected an uncached answer with results');
      const timing = r.headers['server-timing'] ?? '';
      const handler = Number(/search;dur=([\d.]+)/.exec(timing)?.[1]);
      const searx = Number(/searxng;dur=([\d.]+)/.exec(timing)?.[1]);
      (split[kind] ??= { inside: [], outside: [] }).inside.push(handler - searx);
      split[kind].outside.push(wall - handler);
      return [wall, searx];
    };
    const direct = async (query) => {
      const t = performance.now();
      const r = await call(`${SEARXNG_URL}/search?${new URLSearchParams({ q: query, format: 'json', categories: 'general' })}`);
      JSON.parse(r.text);
      return performance.now() - t;
    };
    const kinds = {
      direct: (i) => direct(`drael zznonce-${prefix}-d${i}`).then((w) => [w, Number.NaN]),
      minimal: (i) => through('minimal', `http://127.0.0.1:${frontPort}`, `drael zznonce-${prefix}-m${i}`),
      drael: (i) => through('drael', gateway.url, `drael zznonce-${prefix}-g${i}`, gateway.authHeaders ?? {}),
      ...(baseline ? { baseline: (i) => through('baseline', baseline.gateway.url, `drael zznonce-${prefix}-b${i}`, baseline.gateway.authHeaders ?? {}) } : {}),
    };
    const names = Object.keys(kinds);
    // CPU time (user + system) of each kind's processes over the measured loop, per request: steadier
    // than wall time on a loaded machine. From /proc (clock ticks of 10 ms), Linux only.
    const cpuMs = (pid) => {
      try {
        const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        return (Number(f[11]) + Number(f[12])) * 10;
      } catch {
        return Number.NaN;
      }
    };
    const pidsOf = {
      minimal: [front.pid, responder.pid],
      drael: [gateway.child.pid, drael.search.child.pid],
      ...(baseline ? { baseline: [baseline.gateway.child.pid, baseline.search.child.pid] } : {}),
    };
    const cpuNow = () => Object.fromEntries(Object.entries(pidsOf).map(([k, pids]) => [k, pids.map(cpuMs)]));
    // Warm-up, unmeasured: the first rounds interleaved as measured; then, with --warmup above 10,
    // each front is sent the rest WARMUP_IN_FLIGHT at a time, so V8 has optimised what each request
    // runs before anything is timed. V8 tiers a function up by how often it ran (Maglev after ~400
    // calls, TurboFan after ~3,000 by default): code that runs once a request is still being
    // compiled, in the background, long after ten requests, and Drael has much more of it than the
    // bare shape, so a short warm-up times Drael's code before it is optimised and the bare
    // shape's after.
    for (let i = 0; i < Math.min(WARMUP, 10); i++) for (const k of names) await kinds[k](`w${i}`);
    if (WARMUP > 10) {
      for (const k of names.filter((n) => n !== 'direct')) {
        let next = 10;
        const worker = async () => {
          while (next < WARMUP) await kinds[k](`w${next++}`);
        };
        await Promise.all(Array.from({ length: WARMUP_IN_FLIGHT }, worker));
      }
    }
    // The split counts measured requests only.
    for (const k of Object.keys(split)) delete split[k];
    const wall = Object.fromEntries(names.map((k) => [k, []]));
    const own = Object.fromEntries(names.filter((k) => k !== 'direct').map((k) => [k, []]));
    const cpuBefore = cpuNow();
    for (let i = 0; i < N; i++) {
      // A fresh order every round, so that no kind always follows the same one: SearXNG is slower
      // right after a query, and a rotation (the order this used before) gave each kind a fixed
      // predecessor within the round. With it, Drael compared with itself (--baseline, a copy of
      // the same build) read 0.10-0.25 ms lower as the fourth kind in three runs of four.
      for (const k of shuffled(names, random)) {
        const [w, sx] = await kinds[k](i);
        wall[k].push(w);
        if (k !== 'direct') own[k].push(w - sx);
      }
    }
    const cpuAfter = cpuNow();
    const mSx = median(wall.direct);
    console.log(
      `bench/search/min-pipeline  (${new Date().toISOString()}, node ${process.version}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; n=${N} each, interleaved in a shuffled order, --seed ${seed})`,
    );
    console.log(`SearXNG direct              : median ${fmt(mSx)}`);
    const label = { minimal: 'minimal shape (no product code)', drael: 'Drael (gateway + search service)', baseline: `Drael as built in ${baselineRepo}` };
    for (const k of Object.keys(own)) {
      const m = median(wall[k]);
      const o = median(own[k]);
      console.log(
        `${label[k]}: median ${fmt(m)} = ${(m / mSx).toFixed(3)}× direct; ` +
          `paired own time ${fmt(o)} = ${(1 + o / mSx).toFixed(3)}× direct; ` +
          `CPU per request, front / service: ${cpuAfter[k].map((c, j) => fmt((c - cpuBefore[k][j]) / N)).join(' / ')}`,
      );
      console.log(`  split: inside the service's handler (less SearXNG) ${fmt(median(split[k].inside))}; outside it ${fmt(median(split[k].outside))}`);
    }
    console.log(`Drael's code above the bare shape (paired own time): ${fmt(median(own.drael) - median(own.minimal))}`);
    if (baseline) {
      console.log(`baseline's code above the bare shape (paired own time): ${fmt(median(own.baseline) - median(own.minimal))}`);
    }
  } finally {
    await stopAll();
  }
  process.exit(0);
}
