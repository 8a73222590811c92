#!/usr/bin/env node
// agent-run benchmark (issue 9): the built agent-run and gateway against real NATS, Postgres and
// Redis, with an instant scripted model on loopback.
//  1. run creation → first model call, median (runs one at a time): from sending
//     agent-run.runs.create.v1 to the model upstream receiving the request (both clocks in this
//     process), next to a direct gateway.inference.chat.v1 call for reference;
//  2. runs completed per second with the worker at concurrency 10 (all runs submitted at once;
//     from the first run's created_at to the last run's finished_at, database clock).
//  3. the billing hop of one step alone: reserve + settle (which signs the receipt) on
//     billing.spend.*, median, as a share of the run start above.
// Every step goes through the real billing service (its own schema here): the account's money is
// reserved before the model call and settled after it, and billing signs the receipt and run end.
// Usage: node bench/agent-run/run.mjs [--latency 30] [--runs 200] [--concurrency 10]
// Needs: pnpm build (apps/agent-run, apps/billing, apps/gateway, packages/*), NATS, Postgres, Redis running.
import '../lib/ends-with-bench.mjs';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberOption } from '../lib/cli-options.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { startGatewayProcess, startServiceProcess } = await import(resolve(root, 'packages/test-support/dist/index.js'));
const { NatsRpcClient } = await import(resolve(root, 'packages/nats-rpc/dist/index.js'));
const { deploy } = await import(resolve(root, 'packages/db-migrate/dist/index.js'));
const { agentRunCatalog, billingCatalog, gatewayCatalog } = await import(resolve(root, 'packages/contracts/dist/index.js'));
const pg = (await import(resolve(root, 'apps/agent-run/node_modules/pg/lib/index.js'))).default;

// CPU time (ms) a process has used so far (bench/lib/proc-cpu.mjs): the load-independent figure
// beside the wall times on a shared machine.
const { cpuSeconds } = await import('../lib/proc-cpu.mjs');
const cpuMs = (pid) => cpuSeconds(pid) * 1000;

const LATENCY_RUNS = numberOption('latency', 30);
const THROUGHPUT_RUNS = numberOption('runs', 200);
const CONCURRENCY = numberOption('concurrency', 10);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const BASE_DB = (process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael').split('?')[0];

// The instant model: answers every chat completion at once, and notes when each request arrived.
const arrivals = [];
const model = http.createServer((req, res) => {
  arrivals.push(performance.now());
  req.resume();
  req.on('end', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 0,
      model: 'bench',
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
// The wasm schema engine's connect can time out (P1002) on a loaded machine: try again before giving up.
const migrate = async (opts) => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deploy(opts);
    } catch (err) {
      if (attempt >= 4) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
};
await migrate({ databaseUrl: dbUrl, schemaPath: resolve(appDir, 'prisma/schema.prisma'), migrationsDir: resolve(appDir, 'prisma/migrations') });
const pool = new pg.Pool({ connectionString: BASE_DB, max: 2, options: `-c search_path="${schema}"` });
const billingSchema = `billing_bench_${randomBytes(4).toString('hex')}`;
const billingDbUrl = `${BASE_DB}?schema=${billingSchema}`;
const billingDir = resolve(root, 'apps/billing');
await migrate({ databaseUrl: billingDbUrl, schemaPath: resolve(billingDir, 'prisma/schema.prisma'), migrationsDir: resolve(billingDir, 'prisma/migrations') });

const stops = [];
const cleanup = async () => {
  for (const s of stops.reverse()) await s().catch(() => undefined);
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await pool.query(`DROP SCHEMA IF EXISTS "${billingSchema}" CASCADE`).catch(() => undefined);
  await pool.end();
  model.close();
};
try {
  const billing = await startServiceProcess(
    'billing',
    { NATS_URL, DRAEL_NATS_PREFIX: prefix, LOG_LEVEL: 'error', DATABASE_URL: billingDbUrl, DATABASE_POOL_SIZE: '12', BILLING_RECEIPT_KEY: randomBytes(32).toString('hex') },
    { readyTimeoutMs: 60_000 },
  );
  stops.push(() => billing.stop('SIGKILL'));
  const gateway = await startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: prefix,
      LOG_LEVEL: 'error',
      DRAEL_MODELS: JSON.stringify({ bench: { base_url: modelUrl, model: 'bench' } }),
      DRAEL_BACKEND_SERVICES: 'agent-run',
    },
    { billing: false, readyTimeoutMs: 60_000 },
  );
  stops.push(() => gateway.stop('SIGKILL'));
  const worker = await startServiceProcess(
    'agent-run',
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: prefix,
      LOG_LEVEL: 'error',
      DATABASE_URL: dbUrl,
      DATABASE_POOL_SIZE: '12',
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      AGENT_RUN_QUEUE_PREFIX: `drael-bench:${prefix}`,
      AGENT_RUN_CONCURRENCY: String(CONCURRENCY),
      AGENT_RUN_DATA_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      AGENT_RUN_DATA_KEY_ACTIVE: 'k1',
    },
    { readyTimeoutMs: 60_000 },
  );
  stops.push(() => worker.stop('SIGKILL'));
  const rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  stops.push(() => rpc.close());
  const opts = { timeoutMs: 30_000 };
  // The account that owns the agent: funded, and no step rate in the way of the throughput figure.
  const { account_id: ACCOUNT } = await rpc.request(billingCatalog.createAccount, { name: 'bench', plan: 'free' }, opts);
  await rpc.request(billingCatalog.creditWallet, { account_id: ACCOUNT, amount_micros: 1_000_000_000 }, opts);
  await rpc.request(billingCatalog.setAgentLimits, { account_id: ACCOUNT, agent_steps_per_minute: 1_000_000 }, opts);
  const agent = await rpc.request(
    agentRunCatalog.createAgent,
    { account_id: ACCOUNT, tool_level: 'l3_shell', agent: { model: 'bench', instructions: 'bench', tools: [], limits: { step_limit: 2, budget_usd: 1 } } },
    opts,
  );
  const waitDone = async (id) => {
    for (;;) {
      const { done } = await rpc.request(agentRunCatalog.runEvents, { account_id: ACCOUNT, run_id: id, after: 0, wait_ms: 5_000 }, opts);
      if (done) return;
    }
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  // Warm-up: first queries compile, connections open.
  for (let i = 0; i < 3; i++)
    await waitDone((await rpc.request(agentRunCatalog.createRun, { account_id: ACCOUNT, agent_id: agent.id, tool_level: 'l3_shell', task: 'warm' }, opts)).id);

  const toFirstCall = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const before = arrivals.length;
    const t0 = performance.now();
    const run = await rpc.request(agentRunCatalog.createRun, { account_id: ACCOUNT, agent_id: agent.id, tool_level: 'l3_shell', task: `latency ${i}` }, opts);
    await waitDone(run.id);
    toFirstCall.push(arrivals[before] - t0);
  }
  const direct = [];
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const t0 = performance.now();
    await rpc.request(gatewayCatalog.inferenceChat, { account_id: ACCOUNT, model: 'bench', messages: [{ role: 'user', content: 'x' }], max_tokens: 64 }, opts);
    direct.push(performance.now() - t0);
  }

  // The billing hop of one step on its own: reserve, then settle with the receipt fields.
  const hop = [];
  const hopCpu0 = cpuMs(billing.child.pid);
  const fp = '11'.repeat(32);
  let previous = null;
  for (let i = 0; i < LATENCY_RUNS; i++) {
    const t0 = performance.now();
    const h = await rpc.request(
      billingCatalog.reserveSpend,
      { account_id: ACCOUNT, run_id: 'run_bench_hop', kind: 'inference.chat', amount_micros: 1_000, idempotency_key: `hop-${i}` },
      opts,
    );
    const { receipt } = await rpc.request(
      billingCatalog.settleSpend,
      {
        account_id: ACCOUNT,
        hold_id: h.hold_id,
        kind: 'inference.chat',
        amount_micros: 90,
        receipt: { usage: { prompt_tokens: 20 }, input_fingerprint: fp, output_fingerprint: fp, run: { id: 'run_bench_hop', sequence: i, previous_receipt_hash: previous } },
      },
      opts,
    );
    previous = receipt.hash;
    hop.push(performance.now() - t0);
  }

  const hopCpu = (cpuMs(billing.child.pid) - hopCpu0) / LATENCY_RUNS;

  const procs = { 'agent-run': worker, billing, gateway };
  const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, cpuMs(p.child.pid)]));
  const ids = await Promise.all(
    Array.from({ length: THROUGHPUT_RUNS }, (_, i) =>
      rpc.request(agentRunCatalog.createRun, { account_id: ACCOUNT, agent_id: agent.id, tool_level: 'l3_shell', task: `throughput ${i}` }, opts).then((r) => r.id),
    ),
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
  const failed = await pool.query(
    `SELECT status::text, error_code, min(error_message) AS message, count(*)::int AS n FROM runs WHERE id = ANY($1) AND status <> 'succeeded' GROUP BY 1, 2`,
    [ids],
  );
  for (const f of failed.rows) console.log(`not succeeded: ${f.n} ${f.status} (${f.error_code}: ${f.message})`);
  const cpuPerRun = Object.entries(procs)
    .map(([k, p]) => `${k} ${((cpuMs(p.child.pid) - cpu0[k]) / THROUGHPUT_RUNS).toFixed(2)}`)
    .join(', ');
  console.log(`agent-run bench (${new Date().toISOString()}, load average ${(await import('node:os')).loadavg()[0].toFixed(1)})`);
  console.log(
    `run creation -> first model call, median of ${LATENCY_RUNS}: ${median(toFirstCall).toFixed(1)} ms (min ${Math.min(...toFirstCall).toFixed(1)}, max ${Math.max(...toFirstCall).toFixed(1)})`,
  );
  console.log(
    `direct gateway.inference.chat.v1 round trip, median of ${LATENCY_RUNS}: ${median(direct).toFixed(1)} ms; ratio run-start/direct-call: ${(median(toFirstCall) / median(direct)).toFixed(1)}x`,
  );
  console.log(
    `billing hop of one step (reserve + settle with the signed receipt), median of ${LATENCY_RUNS}: ${median(hop).toFixed(1)} ms = ${((100 * median(hop)) / median(toFirstCall)).toFixed(0)}% of the run start above; billing CPU ${hopCpu.toFixed(2)} ms per hop`,
  );
  console.log(
    `runs completed at worker concurrency ${CONCURRENCY}: ${THROUGHPUT_RUNS} in ${seconds.toFixed(2)} s = ${(THROUGHPUT_RUNS / seconds).toFixed(1)} runs/s (${rows[0].ok} succeeded); CPU ms per run: ${cpuPerRun}`,
  );
} finally {
  await cleanup();
}
process.exit(0);
