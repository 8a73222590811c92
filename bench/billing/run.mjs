// bench/billing: billing's hold + settle through NATS, as the gateway does around a paid tool.
//   1. round trip: hold(1) then settle(1), one after the other; median and p99 (target: median <= 3 ms)
//   2. throughput: holds at concurrency 50 (target: >= 1,000 holds/s)
//   peer: the same hold + settle as two direct SQL calls of the database functions (no NATS, no
//   service), in the same run, so the ratio shows what NATS + validation + Nest add.
// Needs: NATS, PostgreSQL, built apps (pnpm build). Applies billing's migrations to a schema of its
// own, starts billing (apps/billing/dist/main.js) on a NATS prefix of its own, drops the schema after.
// Usage: node bench/billing/run.mjs [--roundtrips N] [--holds N] [--concurrency C]
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { NatsRpcClient } = await import(`${repo}packages/nats-rpc/dist/index.js`);
const { billingCatalog, healthEntry } = await import(`${repo}packages/contracts/dist/index.js`);
const pg = (await import(`${repo}apps/billing/node_modules/pg/lib/index.js`)).default;

const arg = (name, fallback, max) => {
  const i = process.argv.indexOf(`--${name}`);
  return Math.min(i > 0 ? Number(process.argv[i + 1]) : fallback, max);
};
const ROUNDTRIPS = arg('roundtrips', 1000, 10_000);
const HOLDS = arg('holds', 5000, 50_000);
const CONCURRENCY = arg('concurrency', 50, 500);
const WARMUP = 50;
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const base = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/drael');
const schema = `billing_bench_${randomBytes(4).toString('hex')}`;
base.searchParams.set('schema', schema);
const DATABASE_URL = base.toString();
const prefix = `bench-${randomBytes(4).toString('hex')}`;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(2)} ms`;

execFileSync(process.execPath, [`${repo}packages/db-migrate/dist/cli.js`, 'deploy'], { cwd: `${repo}apps/billing`, env: { ...process.env, DATABASE_URL }, stdio: 'inherit' });
const child = spawn(process.execPath, ['dist/main.js'], {
  cwd: `${repo}apps/billing`,
  env: { PATH: process.env.PATH, NATS_URL, DRAEL_NATS_PREFIX: prefix, DATABASE_URL, DATABASE_POOL_SIZE: '20', LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
const admin = new pg.Pool({ connectionString: DATABASE_URL.replace(/[?&]schema=[^&]+/, ''), max: 4, options: `-c search_path="${schema}"` });

try {
  for (let i = 0; ; i++) {
    try {
      await client.request(healthEntry('billing'), {}, { timeoutMs: 500 });
      break;
    } catch {
      if (i > 600) throw new Error('billing did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  // Accounts on the largest plan, enough allowance for every hold of the run.
  const accounts = [];
  for (let i = 0; i < 12; i++) accounts.push((await client.request(billingCatalog.createAccount, { name: `bench-${i}`, plan: 'team' })).account_id);
  let n = 0;
  const next = () => accounts[n++ % accounts.length];

  // 1. hold + settle round trip through NATS
  const rt = [];
  for (let i = 0; i < WARMUP + ROUNDTRIPS; i++) {
    const account_id = next();
    const t0 = performance.now();
    const h = await client.request(billingCatalog.hold, { account_id, tool: 'generate_image', units: 1, idempotency_key: randomUUID() });
    await client.request(billingCatalog.settle, { account_id, hold_id: h.hold_id, units: 1 });
    if (i >= WARMUP) rt.push(performance.now() - t0);
  }

  // peer: the same two operations as direct SQL calls of the database functions
  const direct = [];
  for (let i = 0; i < WARMUP + ROUNDTRIPS; i++) {
    const account = next();
    const t0 = performance.now();
    const { rows } = await admin.query(`SELECT id FROM billing_hold($1, $2, $3, $4, $5, 1, '{"team":1000}'::jsonb, now(), 300)`, [randomUUID(), account, randomUUID(), 'generate_image', 'images']);
    await admin.query(`SELECT outcome FROM billing_resolve($1, $2, 'settled', 1, now())`, [rows[0].id, account]);
    if (i >= WARMUP) direct.push(performance.now() - t0);
  }

  // 2. holds per second at concurrency C
  let issued = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (issued < HOLDS) {
        issued++;
        try {
          await client.request(billingCatalog.hold, { account_id: next(), tool: 'generate_image', units: 1, idempotency_key: randomUUID() }, { timeoutMs: 10_000 });
        } catch {
          failed++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;

  const median = pct(rt, 50);
  const p99 = pct(rt, 99);
  const holdsPerS = (HOLDS - failed) / elapsed;
  console.log(`billing bench (${new Date().toISOString()}, loadavg ${(await import('node:os')).loadavg().map((x) => x.toFixed(1)).join(' ')})`);
  console.log(`hold+settle via NATS   median ${ms(median)}  p99 ${ms(p99)}  (n=${rt.length})   target median <= 3 ms: ${median <= 3 ? 'met' : 'NOT met'}`);
  console.log(`hold+settle direct SQL median ${ms(pct(direct, 50))}  p99 ${ms(pct(direct, 99))}  (peer; NATS path / direct = ${(median / pct(direct, 50)).toFixed(2)}x)`);
  console.log(`holds/s at concurrency ${CONCURRENCY}: ${holdsPerS.toFixed(0)} (${HOLDS - failed} holds in ${elapsed.toFixed(2)} s, ${failed} failed)   target >= 1,000: ${holdsPerS >= 1000 ? 'met' : 'NOT met'}`);
} finally {
  await client.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}
