// bench/billing: billing's hold + settle through NATS, as the gateway does around a paid tool.
//   1. round trip: hold(1) then settle(1), one after the other; median and p99 (target: median <= 3 ms),
//      with the CPU time the billing process and this client spent per round trip (less load-dependent).
//   peer: the same hold + settle as two direct SQL calls of the database functions (no NATS, no
//      service), in blocks alternating with the NATS ones, so the ratio shows what NATS + validation
//      + Nest add.
//   2. throughput: holds at concurrency 50 (target: >= 1,000 holds/s), two ways:
//      a. many accounts (the headline): each of the 50 callers holds on an account of its own, as
//         50 concurrent paid calls of 50 tenants would;
//      b. one account: all 50 callers hold on the same account, so every hold queues on that
//         account's weekly-allowance row lock (by design: it is what makes an overdraft impossible).
// A/B: BILLING_B_DIR=<another checkout's apps/billing> (built, with its packages) adds a second
//   billing to the same run, called through its own tree's typed client: both take turns in every
//   phase (alternating blocks of round trips, --rounds throughput rounds), so load drift on a
//   shared machine hits both alike.
// Needs: NATS, PostgreSQL, built apps (pnpm build). Applies billing's migrations to a schema of its
// own (per billing), starts billing (apps/billing/dist/main.js) on a NATS prefix of its own, drops
// the schemas after.
// Usage: node bench/billing/run.mjs [--roundtrips N] [--holds N] [--concurrency C] [--rounds R] [--cpu-prof DIR]
//   --cpu-prof DIR: the billing process writes a V8 CPU profile to DIR when it stops (profile the
//   client side with `node --cpu-prof bench/billing/run.mjs`).
import '../lib/ends-with-bench.mjs';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from '../lib/proc-cpu.mjs';
import { numberOption, option } from '../lib/cli-options.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const pg = (await import(`${repo}apps/billing/node_modules/pg/lib/index.js`)).default;

// Each count has a ceiling: a typo cannot start a run of hours.
const cappedNumberOption = (name, fallback, max) => Math.min(numberOption(name, fallback), max);
// BILLING_DIR=<a checkout's apps/billing> measures that build as A (default: this tree's).
const A_DIR = process.env.BILLING_DIR ? resolve(process.env.BILLING_DIR) : undefined;
const B_DIR = process.env.BILLING_B_DIR ? resolve(process.env.BILLING_B_DIR) : undefined;
const ROUNDTRIPS = cappedNumberOption('roundtrips', 1000, 10_000);
const HOLDS = cappedNumberOption('holds', 5000, 50_000);
const CONCURRENCY = cappedNumberOption('concurrency', 50, 500);
// Throughput is measured in ROUNDS turns per billing (alternating which goes first), HOLDS in all.
const ROUNDS = cappedNumberOption('rounds', B_DIR ? 4 : 1, 20);
const CPU_PROF_DIR = option('cpu-prof', undefined);
// Enough warm-up calls for V8 to optimise the hot path in both processes before anything is timed.
const WARMUP = 300;
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const base = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael';

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(2)} ms`;
// CPU time of a process in ms (bench/lib/proc-cpu.mjs); NaN once it is gone.
const procCpuMs = (pid) => {
  try {
    return cpuSeconds(pid) * 1000;
  } catch {
    return NaN;
  }
};
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const cpu = (f) => (Number.isNaN(f) ? 'n/a' : `${f.toFixed(2)} ms`);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/**
 * One billing under test: its tree (the client, contracts and migrations come from the same tree
 * as the service), its own schema, process, NATS prefix and accounts.
 */
async function startBilling(label, tree) {
  const side = { label, tree, rt: [], serverCpu: 0, clientCpu: 0, throughput: {} };
  sides.push(side); // stopped in the end whatever happens from here
  const { NatsRpcClient } = await import(`${tree}packages/nats-rpc/dist/index.js`);
  side.catalog = (await import(`${tree}packages/contracts/dist/index.js`)).billingCatalog;
  const { healthEntry } = await import(`${tree}packages/contracts/dist/index.js`);
  side.schema = `billing_bench_${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  url.searchParams.set('schema', side.schema);
  side.databaseUrl = url.toString();
  side.admin = new pg.Pool({ connectionString: base.replace(/[?&]schema=[^&]+/, ''), max: 4, options: `-c search_path="${side.schema}"` });
  // Other migrations running at the same moment (tests) hold the schema engine's advisory lock: retry.
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync(process.execPath, [`${tree}packages/db-migrate/dist/cli.js`, 'deploy'], {
        cwd: `${tree}apps/billing`,
        env: { ...process.env, DATABASE_URL: side.databaseUrl },
        stdio: 'inherit',
      });
      break;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  side.child = spawn(process.execPath, [...(CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR] : []), 'dist/main.js'], {
    cwd: `${tree}apps/billing`,
    // billing's own pool size (DATABASE_POOL_SIZE default, 10): the bench measures what ships.
    env: { PATH: process.env.PATH, NATS_URL, DRAEL_NATS_PREFIX: prefix, DATABASE_URL: side.databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  side.client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  for (let i = 0; ; i++) {
    try {
      await side.client.request(healthEntry('billing'), {}, { timeoutMs: 500 });
      break;
    } catch {
      if (i > 600) throw new Error(`billing ${label} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const { catalog, client } = side;
  // Accounts on the largest plan: one per concurrent caller, plus the single hot account.
  side.accounts = [];
  for (let i = 0; i < CONCURRENCY; i++) side.accounts.push((await client.request(catalog.createAccount, { name: `bench-${i}`, plan: 'team' })).account_id);
  side.hot = (await client.request(catalog.createAccount, { name: 'bench-hot', plan: 'team' })).account_id;
  // A bench-only allowance big enough for every hold of the run (the team plan's 1,000 images a
  // week would turn the later holds into cheap weekly_allowance_reached answers). The row exists
  // after a first hold; billing_hold's INSERT ... ON CONFLICT DO NOTHING keeps the raised figure.
  for (const a of [...side.accounts, side.hot]) {
    const h = await client.request(catalog.hold, { account_id: a, tool: 'generate_image', units: 1, idempotency_key: randomUUID() });
    await client.request(catalog.release, { account_id: a, hold_id: h.hold_id });
  }
  await side.admin.query(`UPDATE weekly_allowances SET allowance = 10000000`);
  let n = 0;
  side.next = () => side.accounts[n++ % side.accounts.length];
  side.viaNats = async (account_id) => {
    const h = await client.request(catalog.hold, { account_id, tool: 'generate_image', units: 1, idempotency_key: randomUUID() });
    await client.request(catalog.settle, { account_id, hold_id: h.hold_id, units: 1 });
  };
  return side;
}

async function stopBilling(side) {
  await side.client?.close().catch(() => undefined);
  if (side.child && side.child.exitCode === null) {
    side.child.kill('SIGTERM');
    await new Promise((r) => side.child.once('exit', r));
  }
  await side.admin.query(`DROP SCHEMA IF EXISTS "${side.schema}" CASCADE`);
  await side.admin.end();
}

// holds at concurrency C on one billing; pick(worker) names the account each caller holds on
async function throughput(side, pick, holds) {
  let issued = 0;
  let failed = 0;
  const cpu0 = procCpuMs(side.child.pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (issued < holds) {
        issued++;
        try {
          await side.client.request(side.catalog.hold, { account_id: pick(worker), tool: 'generate_image', units: 1, idempotency_key: randomUUID() }, { timeoutMs: 10_000 });
        } catch (err) {
          if (failed++ === 0) console.error(`first failed hold (${side.label}): ${err.message}`);
        }
      }
    }),
  );
  return { ok: holds - failed, failed, elapsed: (performance.now() - t0) / 1000, serverCpu: procCpuMs(side.child.pid) - cpu0 };
}

const sides = [];
try {
  await startBilling(A_DIR ? `A (${A_DIR})` : 'A (this tree)', A_DIR ? `${resolve(A_DIR, '../..')}/` : repo);
  if (B_DIR) await startBilling(`B (${B_DIR})`, `${resolve(B_DIR, '../..')}/`);
  const [a] = sides;

  // 1. hold + settle round trip through NATS, and the peer: the same two operations as direct SQL
  // calls of the database functions, as the same named statements billing's hold repository runs
  // (on A's schema). They alternate in blocks (with B's NATS blocks when there is a B), so a burst
  // of load on a shared machine hits all alike.
  const PEER_HOLD = { name: 'peer_hold', text: 'SELECT * FROM billing_hold($1::uuid, $2::uuid, $3, $4, $5, $6::int, $7::jsonb, $8::timestamptz, $9::int)' };
  const PEER_RESOLVE = { name: 'peer_resolve', text: 'SELECT * FROM billing_resolve($1::uuid, $2::uuid, $3::"HoldStatus", $4::int, $5::timestamptz)' };
  const viaSql = async (account) => {
    const { rows } = await a.admin.query({ ...PEER_HOLD, values: [randomUUID(), account, randomUUID(), 'generate_image', 'images', 1, '{"team":1000}', new Date(), 300] });
    await a.admin.query({ ...PEER_RESOLVE, values: [rows[0].id, account, 'settled', 1, new Date()] });
  };
  for (let i = 0; i < WARMUP; i++) {
    for (const side of sides) await side.viaNats(side.next());
    await viaSql(a.next());
  }
  const BLOCK = 100;
  const direct = [];
  for (let done = 0, block = 0; done < ROUNDTRIPS; done += BLOCK, block++) {
    const count = Math.min(BLOCK, ROUNDTRIPS - done);
    const order = block % 2 ? [...sides].reverse() : sides;
    for (const side of order) {
      const [s0, c0] = [procCpuMs(side.child.pid), selfCpuMs()];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await side.viaNats(side.next());
        side.rt.push(performance.now() - t0);
      }
      side.serverCpu += procCpuMs(side.child.pid) - s0;
      side.clientCpu += selfCpuMs() - c0;
    }
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await viaSql(a.next());
      direct.push(performance.now() - t0);
    }
  }

  // 2. holds per second at concurrency C, in ROUNDS turns per billing
  for (const [mode, pick] of [
    ['many', (side) => (worker) => side.accounts[worker]],
    ['one', (side) => () => side.hot],
  ]) {
    for (let round = 0; round < ROUNDS; round++) {
      const holds = Math.floor(HOLDS / ROUNDS) + (round < HOLDS % ROUNDS ? 1 : 0);
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const t = await throughput(side, pick(side), holds);
        const sum = (side.throughput[mode] ??= { ok: 0, failed: 0, elapsed: 0, serverCpu: 0 });
        for (const k of Object.keys(sum)) sum[k] += t[k];
      }
    }
  }

  const line = (t) => `${(t.ok / t.elapsed).toFixed(0)} (${t.ok} holds in ${t.elapsed.toFixed(2)} s, ${t.failed} failed; billing CPU ${cpu(t.serverCpu / (t.ok + t.failed))}/hold)`;
  console.log(`billing bench (${new Date().toISOString()}, loadavg ${load()}${B_DIR ? `, A/B, throughput in ${ROUNDS} rounds each` : ''})`);
  for (const side of sides) {
    const median = pct(side.rt, 50);
    if (B_DIR) console.log(`${side.label}:`);
    console.log(`hold+settle via NATS   median ${ms(median)}  p99 ${ms(pct(side.rt, 99))}  (n=${side.rt.length})   target median <= 3 ms: ${median <= 3 ? 'met' : 'NOT met'}`);
    console.log(`  CPU per round trip: billing process ${cpu(side.serverCpu / side.rt.length)}, this client ${cpu(side.clientCpu / side.rt.length)}`);
    if (side === a) {
      console.log(`hold+settle direct SQL median ${ms(pct(direct, 50))}  p99 ${ms(pct(direct, 99))}  (peer; NATS path / direct = ${(median / pct(direct, 50)).toFixed(2)}x)`);
    }
    const many = side.throughput.many;
    console.log(
      `holds/s at concurrency ${CONCURRENCY}, ${CONCURRENCY} accounts (headline): ${line(many)}   target >= 1,000: ${many.ok / many.elapsed >= 1000 ? 'met' : 'NOT met'}`,
    );
    console.log(`holds/s at concurrency ${CONCURRENCY}, ONE account (row lock):  ${line(side.throughput.one)}`);
  }
  if (B_DIR) {
    const [, b] = sides;
    const ratio = (x, y) => `${((x / y - 1) * 100).toFixed(1)} %`;
    const perS = (side, mode) => side.throughput[mode].ok / side.throughput[mode].elapsed;
    console.log(
      `A vs B: median ${ratio(pct(a.rt, 50), pct(b.rt, 50))}, billing CPU/rt ${ratio(a.serverCpu, b.serverCpu)}, client CPU/rt ${ratio(a.clientCpu, b.clientCpu)}, ` +
        `holds/s 50 accounts ${ratio(perS(a, 'many'), perS(b, 'many'))}, one account ${ratio(perS(a, 'one'), perS(b, 'one'))} (loadavg now ${load()})`,
    );
  }
} finally {
  for (const side of sides) await stopBilling(side);
}
