// bench/sandbox-sessions: what saving a session to the JetStream Object Store adds to a call.
// Interleaved in one run (same machine load): a 1 KiB file write (the session's files are tarred
// and saved before the answer) beside a read of that file (no save), on a session holding
// almost nothing, then on one holding --mib MiB. Loopback, the local NATS (JetStream on) and
// Docker only; starts its own sandbox process (own prefix, label, state dir, buckets) and
// removes its buckets at the end.
// Usage: node bench/sandbox-sessions/run.mjs [--n 20] [--mib 32]
import { randomBytes } from 'node:crypto';
import { sandboxCatalog } from '../../packages/contracts/dist/index.js';
import { startSandboxService } from '../lib/sandbox-service.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
// Bounded: at most 100 pairs per size, at most 200 MiB of workspace.
const N = Math.min(arg('n', 20), 100);
const MIB = Math.min(arg('mib', 32), 200);
const instance = `bench-${randomBytes(3).toString('hex')}`;

const sandbox = await startSandboxService({ instance });
const { client } = sandbox;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const timed = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
try {
  const rows = [];
  for (const [label, session, fill] of [
    ['empty session', 'small', 0],
    [`session holding ${MIB} MiB`, 'big', MIB],
  ]) {
    const ws = { tenant: 'bench', session };
    if (fill > 0) {
      const r = await client.request(sandboxCatalog.run, { ...ws, runtime: 'bash', code: `head -c ${fill * 1024 * 1024} /dev/urandom > fill.bin` });
      if (!r.ok) throw new Error(`fill failed: ${r.stderr}`);
    }
    const content = Buffer.alloc(1024, 7).toString('base64');
    const write = () => client.request(sandboxCatalog.filesWrite, { ...ws, path: 'note.bin', content_base64: content }, { timeoutMs: 120_000 });
    const read = () => client.request(sandboxCatalog.filesRead, { ...ws, path: 'note.bin' }, { timeoutMs: 120_000 });
    await write();
    await read();
    const w = [];
    const r = [];
    for (let i = 0; i < N; i++) {
      w.push(await timed(write));
      r.push(await timed(read));
    }
    rows.push({ label, w, r });
  }
  const load = (await import('node:os'))
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
  console.log(`n=${N} per size, load average ${load}`);
  console.log('| workspace | write (saved) p50 | p95 | read (not saved) p50 | p95 | save ≈ p50 difference |');
  console.log('|---|---|---|---|---|---|');
  for (const { label, w, r } of rows) {
    const f = (x) => `${x.toFixed(0)} ms`;
    console.log(`| ${label} | ${f(pct(w, 50))} | ${f(pct(w, 95))} | ${f(pct(r, 50))} | ${f(pct(r, 95))} | ${f(pct(w, 50) - pct(r, 50))} |`);
  }
} finally {
  await sandbox.stop();
}
