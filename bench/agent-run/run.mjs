#!/usr/bin/env node
// agent-run benchmark (issue 9): the built agent-run and gateway against real NATS, Postgres and
// Redis, with an instant scripted model on loopback.
//  1. run creation → first model call, median (runs one at a time): from sending
//     agent-run.runs.create.v1 to the model upstream receiving the request (both clocks in this
//     process), next to a direct gateway.inference.chat.v1 call for reference;
//  2. runs completed per second with the worker at concurrency 10 (all runs submitted at once;
//     from the first run's created_at to the last run's finished_at, database clock).
// Usage: node bench/agent-run/run.mjs [--latency 30] [--runs 200] [--concurrency 10]
// Needs: pnpm build (apps/agent-run, apps/gateway, packages/*), NATS, Postgres, Redis running.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { startGatewayProcess, startServiceProcess } = await import(resolve(root, 'packages/test-support/dist/index.js'));
const { NatsRpcClient } = await import(resolve(root, 'packages/nats-rpc/dist/index.js'));
const { deploy } = await import(resolve(root, 'packages/db-migrate/dist/index.js'));
const { agentRunCatalog, gatewayCatalog } = await import(resolve(root, 'packages/contracts/dist/index.js'));
const pg = (await import(resolve(root, 'apps/agent-run/node_modules/pg/lib/index.js'))).default;

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const LATENCY_RUNS = arg('latency', 30);
const THROUGHPUT_RUNS = arg('runs', 200);
const CONCURRENCY = arg('concurrency', 10);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const BASE_DB = (process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael').split('?')[0];

// The instant model: answers every chat completion at once, and notes when each request arrived.
const arrivals = [];
const model = http.createServer((req, res) => {
  arrivals.push(performance.now());
  req.resume();
  req.on('end', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-bench', object: 'chat.completion', created: 0, model: 'bench',
      choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise((r) => model.listen(0, '127.0.0.1', r));
const modelUrl = `http://127.0.0.1:${model.address().port}/v1`;

const prefix = `bench-ar-${randomBytes(4).toString('hex')}`;
const schema = `agent_run_bench_${randomBytes(4).toString('hex')}`;
const dbUrl = `${BASE_DB}?schema=${schema}`;
const appDir = resolve(root, 'apps/agent-run');
await deploy({ databaseUrl: dbUrl, schemaPath: resolve(appDir, 'prisma/schema.prisma'), migrationsDir: resolve(appDir, 'prisma/migrations') });
const pool = new pg.Pool({ connectionString: BASE_DB, max: 2, options: `-c search_path="${schema}"` });

const stops = [];
const cleanup = async () => {
  for (const s of stops.reverse()) await s().catch(() => undefined);
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await pool.end();
  model.close();
};
try {
  const gateway = await startGatewayProcess(
    { NATS_URL, DRAEL_NATS_PREFIX: prefix, LOG_LEVEL: 'error', DRAEL_MODELS: JSON.stringify({ bench: { base_url: modelUrl, model: 'bench' } }), DRAEL_BACKEND_SERVICES: 'agent-run' },
    { billing: false, readyTimeoutMs: 60_000 },
  );
  stops.push(() => gateway.stop('SIGKILL'));
  const worker = await startServiceProcess(
    'agent-run',
    {
      NATS_URL, DRAEL_NATS_PREFIX: prefix, LOG_LEVEL: 'error', DATABASE_URL: dbUrl, DATABASE_POOL_SIZE: '12',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', AGENT_RUN_QUEUE_PREFIX: `drael-bench:${prefix}`,
      AGENT_RUN_CONCURRENCY: String(CONCURRENCY), AGENT_RUN_RECEIPT_KEY: randomBytes(32).toString('hex'),
      AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`, AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
    },
    { readyTimeoutMs: 60_000 },
  );
  stops.push(() => worker.stop('SIGKILL'));
  const rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  stops.push(() => rpc.close());
  const opts = { timeoutMs: 30_000 };
  const agent = await rpc.request(agentRunCatalog.createAgent, { account_id: 'acct_bench', agent: { model: 'bench', instructions: 'bench', tools: [], limits: { step_limit: 2, budget_usd: 1 } } }, opts);
  const waitDone = async (id) => {
    for (;;) {
      const { done } = await rpc.request(agentRunCatalog.runEvents, { account_id: 'acct_bench', run_id: id, after: 0, wait_ms: 5_000 }, opts);
      if (done) return;
    }
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  // Warm-up: first queries compile, connections open.
  for (let i = 0; i < 3; i++) await waitDone((await rpc.request(agentRunCatalog.createRun, { account_id: 'acct_bench', agent_id: agent.id, task: 'warm' }, opts)).id);

  const toFirstCall = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const before = arrivals.length;
    const t0 = performance.now();
    const run = await rpc.request(agentRunCatalog.createRun, { account_id: 'acct_bench', agent_id: agent.id, task: `latency ${i}` }, opts);
    await waitDone(run.id);
    toFirstCall.push(arrivals[before] - t0);
  }
  const direct = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const t0 = performance.now();
    await rpc.request(gatewayCatalog.inferenceChat, { account_id: 'acct_bench', model: 'bench', messages: [{ role: 'user', content: 'x' }], max_tokens: 64 }, opts);
    direct.push(performance.now() - t0);
  }

  const ids = await Promise.all(
    Array.from({ length: THROUGHPUT_RUNS }, (_, i) => rpc.request(agentRunCatalog.createRun, { account_id: 'acct_bench', agent_id: agent.id, task: `throughput ${i}` }, opts).then((r) => r.id)),
  );
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND finished_at IS NOT NULL`, [ids]);
    if (rows[0].n === ids.length) break;
    if (Date.now() > deadline) throw new Error(`only ${rows[0].n}/${ids.length} runs finished in 300 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const { rows } = await pool.query(
    `SELECT EXTRACT(EPOCH FROM (max(finished_at) - min(created_at)))::float AS s, count(*) FILTER (WHERE status = 'succeeded')::int AS ok FROM runs WHERE id = ANY($1)`,
    [ids],
  );
  const seconds = rows[0].s;
  console.log(`agent-run bench (${new Date().toISOString()}, load average ${(await import('node:os')).loadavg()[0].toFixed(1)})`);
  console.log(`run creation -> first model call, median of ${LATENCY_RUNS}: ${median(toFirstCall).toFixed(1)} ms (min ${Math.min(...toFirstCall).toFixed(1)}, max ${Math.max(...toFirstCall).toFixed(1)})`);
  console.log(`direct gateway.inference.chat.v1 round trip, median of ${LATENCY_RUNS}: ${median(direct).toFixed(1)} ms; ratio run-start/direct-call: ${(median(toFirstCall) / median(direct)).toFixed(1)}x`);
  console.log(`runs completed at worker concurrency ${CONCURRENCY}: ${THROUGHPUT_RUNS} in ${seconds.toFixed(2)} s = ${(THROUGHPUT_RUNS / seconds).toFixed(1)} runs/s (${rows[0].ok} succeeded)`);
} finally {
  await cleanup();
}
process.exit(0);
