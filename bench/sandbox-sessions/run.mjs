// bench/sandbox-sessions: what saving a session to the JetStream Object Store adds to a call.
// Interleaved in one run (same machine load): a 1 KiB file write (the session is saved before the
// answer) beside a read of that file (no save), on a session holding almost nothing, then on one
// holding --mib MiB. Loopback, the local NATS (JetStream on) and Docker only; starts its own
// sandbox process (own prefix, label, state dir, buckets) and removes its buckets at the end.
// SANDBOX_DIR_B=<another build's apps/sandbox>: the same calls on that build too, interleaved (A/B).
// Usage: node bench/sandbox-sessions/run.mjs [--n 20] [--mib 32]
import '../lib/ends-with-bench.mjs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { sandboxCatalog } from '../../packages/contracts/dist/index.js';
import { startSandboxService } from '../lib/sandbox-service.mjs';
import { numberOption } from '../lib/cli-options.mjs';

// Bounded: at most 100 pairs per size, at most 200 MiB of workspace.
const N = Math.min(numberOption('n', 20), 100);
const MIB = Math.min(numberOption('mib', 32), 200);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

/** One sandbox service (this checkout's, or another build's `dir` for the A/B), with its own instance and prefix. */
async function startService(dir, label) {
  const service = await startSandboxService({ instance: `bench-${randomBytes(3).toString('hex')}`, dir });
  return { label, ...service };
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const timed = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

const services = [];
const rows = [];
const loadAtStart = load();
try {
  services.push(await startService(`${repo}/apps/sandbox`, 'A'));
  if (process.env.SANDBOX_DIR_B) services.push(await startService(process.env.SANDBOX_DIR_B, 'B'));
  for (const [label, session, fill] of [
    ['empty session', 'small', 0],
    [`session holding ${MIB} MiB`, 'big', MIB],
  ]) {
    const ws = { tenant: 'bench', session };
    const content = Buffer.alloc(1024, 7).toString('base64');
    const calls = services.map((s) => ({
      s,
      w: [],
      r: [],
      // A fresh 1 KiB each time (a counter in it): content-addressed saves gain nothing from repeats.
      write: (i) =>
        s.client.request(sandboxCatalog.filesWrite, { ...ws, path: 'note.bin', content_base64: Buffer.from(`${i}`.padEnd(1024, '.')).toString('base64') }, { timeoutMs: 120_000 }),
      read: () => s.client.request(sandboxCatalog.filesRead, { ...ws, path: 'note.bin' }, { timeoutMs: 120_000 }),
    }));
    for (const c of calls) {
      if (fill > 0) {
        const r = await c.s.client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: `head -c ${fill * 1024 * 1024} /dev/urandom > fill.bin` }, { timeoutMs: 300_000 });
        if (!r.ok) throw new Error(`fill failed: ${r.stderr}`);
      }
      await c.s.client.request(sandboxCatalog.filesWrite, { ...ws, path: 'note.bin', content_base64: content }, { timeoutMs: 120_000 });
      await c.read();
    }
    for (let i = 0; i < N; i++) {
      for (const c of calls) {
        c.w.push(await timed(() => c.write(i)));
        c.r.push(await timed(c.read));
      }
    }
    for (const c of calls) rows.push({ label: services.length > 1 ? `${c.s.label}: ${label}` : label, w: c.w, r: c.r });
  }
} finally {
  for (const s of services) await s.stop();
}
console.log(`n=${N} per size, load average ${loadAtStart} at start, ${load()} at end; ${new Date().toISOString()}`);
console.log('| workspace | write (saved) p50 | p95 | read (not saved) p50 | p95 | save ≈ p50 difference |');
console.log('|---|---|---|---|---|---|');
for (const { label, w, r } of rows) {
  const f = (x) => `${x.toFixed(0)} ms`;
  console.log(`| ${label} | ${f(pct(w, 50))} | ${f(pct(w, 95))} | ${f(pct(r, 50))} | ${f(pct(r, 95))} | ${f(pct(w, 50) - pct(r, 50))} |`);
}
