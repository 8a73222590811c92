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
// Needs: NATS, PostgreSQL, built apps (pnpm build). Applies billing's migrations to a schema of its
// own, starts billing (apps/billing/dist/main.js) on a NATS prefix of its own, drops the schema after.
// Usage: node bench/billing/run.mjs [--roundtrips N] [--holds N] [--concurrency C] [--cpu-prof DIR]
//   --cpu-prof DIR: the billing process writes a V8 CPU profile to DIR when it stops (profile the
//   client side with `node --cpu-prof bench/billing/run.mjs`).
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from '../lib/proc-cpu.mjs';
import { startService } from '../lib/service.mjs';
import { benchPrefix } from '../lib/stack-env.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { billingCatalog } = await import(`${repo}packages/contracts/dist/index.js`);
const pg = (await import(`${repo}apps/billing/node_modules/pg/lib/index.js`)).default;

const arg = (name, fallback, max) => {
  const i = process.argv.indexOf(`--${name}`);
  return Math.min(i > 0 ? Number(process.argv[i + 1]) : fallback, max);
};
const ROUNDTRIPS = arg('roundtrips', 1000, 10_000);
const HOLDS = arg('holds', 5000, 50_000);
const CONCURRENCY = arg('concurrency', 50, 500);
const profIdx = process.argv.indexOf('--cpu-prof');
const CPU_PROF_DIR = profIdx > 0 ? process.argv[profIdx + 1] : undefined;
// Enough warm-up calls for V8 to optimise the hot path in both processes before anything is timed.
const WARMUP = 300;
const base = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael');
const schema = `billing_bench_${randomBytes(4).toString('hex')}`;
base.searchParams.set('schema', schema);
const DATABASE_URL = base.toString();
const prefix = benchPrefix();

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

// Other migrations running at the same moment (tests) hold the schema engine's advisory lock: retry.
for (let attempt = 1; ; attempt++) {
  try {
    execFileSync(process.execPath, [`${repo}packages/db-migrate/dist/cli.js`, 'deploy'], { cwd: `${repo}apps/billing`, env: { ...process.env, DATABASE_URL }, stdio: 'inherit' });
    break;
  } catch (err) {
    if (attempt >= 5) throw err;
  }
}
// billing's own pool size (DATABASE_POOL_SIZE default, 10): the bench measures what ships.
const billing = await startService({ app: 'billing', prefix, env: { DATABASE_URL }, nodeArgs: CPU_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR] : [] });
const { child, client } = billing;
const admin = new pg.Pool({ connectionString: DATABASE_URL.replace(/[?&]schema=[^&]+/, ''), max: 4, options: `-c search_path="${schema}"` });

try {
  // Accounts on the largest plan: one per concurrent caller, plus the single hot account.
  const accounts = [];
  for (let i = 0; i < CONCURRENCY; i++) accounts.push((await client.request(billingCatalog.createAccount, { name: `bench-${i}`, plan: 'team' })).account_id);
  const hot = (await client.request(billingCatalog.createAccount, { name: 'bench-hot', plan: 'team' })).account_id;
  // A bench-only allowance big enough for every hold of the run (the team plan's 1,000 images a
  // week would turn the later holds into cheap weekly_allowance_reached answers). The row exists
  // after a first hold; billing_hold's INSERT ... ON CONFLICT DO NOTHING keeps the raised figure.
  for (const a of [...accounts, hot]) {
    const h = await client.request(billingCatalog.hold, { account_id: a, tool: 'generate_image', units: 1, idempotency_key: randomUUID() });
    await client.request(billingCatalog.release, { account_id: a, hold_id: h.hold_id });
  }
  await admin.query(`UPDATE weekly_allowances SET allowance = 10000000`);
  let n = 0;
  const next = () => accounts[n++ % accounts.length];

  // 1. hold + settle round trip through NATS, and the peer: the same two operations as direct SQL
  // calls of the database functions, as the same named statements billing's hold repository runs.
  // The two alternate in blocks, so a burst of load on a shared machine hits both alike.
  const PEER_HOLD = { name: 'peer_hold', text: 'SELECT * FROM billing_hold($1::uuid, $2::uuid, $3, $4, $5, $6::int, $7::jsonb, $8::timestamptz, $9::int)' };
  const PEER_RESOLVE = { name: 'peer_resolve', text: 'SELECT * FROM billing_resolve($1::uuid, $2::uuid, $3::"HoldStatus", $4::int, $5::timestamptz)' };
  const viaNats = async (account_id) => {
    const h = await client.request(billingCatalog.hold, { account_id, tool: 'generate_image', units: 1, idempotency_key: randomUUID() });
    await client.request(billingCatalog.settle, { account_id, hold_id: h.hold_id, units: 1 });
  };
  const viaSql = async (account) => {
    const { rows } = await admin.query({ ...PEER_HOLD, values: [randomUUID(), account, randomUUID(), 'generate_image', 'images', 1, '{"team":1000}', new Date(), 300] });
    await admin.query({ ...PEER_RESOLVE, values: [rows[0].id, account, 'settled', 1, new Date()] });
  };
  for (let i = 0; i < WARMUP; i++) {
    await viaNats(next());
    await viaSql(next());
  }
  const BLOCK = 100;
  const rt = [];
  const direct = [];
  let serverCpu = 0;
  let clientCpu = 0;
  for (let done = 0; done < ROUNDTRIPS; done += BLOCK) {
    const count = Math.min(BLOCK, ROUNDTRIPS - done);
    const [s0, c0] = [procCpuMs(child.pid), selfCpuMs()];
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await viaNats(next());
      rt.push(performance.now() - t0);
    }
    serverCpu += procCpuMs(child.pid) - s0;
    clientCpu += selfCpuMs() - c0;
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      await viaSql(next());
      direct.push(performance.now() - t0);
    }
  }
  const serverCpuPerRt = serverCpu / ROUNDTRIPS;
  const clientCpuPerRt = clientCpu / ROUNDTRIPS;

  // 2. holds per second at concurrency C; pick(worker) names the account each caller holds on
  const throughput = async (pick) => {
    let issued = 0;
    let failed = 0;
    const cpu0 = procCpuMs(child.pid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        while (issued < HOLDS) {
          issued++;
          try {
            await client.request(billingCatalog.hold, { account_id: pick(worker), tool: 'generate_image', units: 1, idempotency_key: randomUUID() }, { timeoutMs: 10_000 });
          } catch (err) {
            if (failed++ === 0) console.error(`first failed hold: ${err.message}`);
          }
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    return { ok: HOLDS - failed, failed, elapsed, perS: (HOLDS - failed) / elapsed, serverCpuPerHold: (procCpuMs(child.pid) - cpu0) / HOLDS };
  };
  const many = await throughput((worker) => accounts[worker]);
  const one = await throughput(() => hot);

  const median = pct(rt, 50);
  const p99 = pct(rt, 99);
  const line = (t) => `${t.perS.toFixed(0)} (${t.ok} holds in ${t.elapsed.toFixed(2)} s, ${t.failed} failed; billing CPU ${cpu(t.serverCpuPerHold)}/hold)`;
  console.log(
    `billing bench (${new Date().toISOString()}, loadavg ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})`,
  );
  console.log(`hold+settle via NATS   median ${ms(median)}  p99 ${ms(p99)}  (n=${rt.length})   target median <= 3 ms: ${median <= 3 ? 'met' : 'NOT met'}`);
  console.log(`  CPU per round trip: billing process ${cpu(serverCpuPerRt)}, this client ${cpu(clientCpuPerRt)}`);
  console.log(`hold+settle direct SQL median ${ms(pct(direct, 50))}  p99 ${ms(pct(direct, 99))}  (peer; NATS path / direct = ${(median / pct(direct, 50)).toFixed(2)}x)`);
  console.log(`holds/s at concurrency ${CONCURRENCY}, ${CONCURRENCY} accounts (headline): ${line(many)}   target >= 1,000: ${many.perS >= 1000 ? 'met' : 'NOT met'}`);
  console.log(`holds/s at concurrency ${CONCURRENCY}, ONE account (row lock):  ${line(one)}`);
} finally {
  await billing.stop();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
