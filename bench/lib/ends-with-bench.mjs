// Imported for its effect: every process a bench starts ends with it, however the bench ends (its
// last line, an error, Ctrl-C, the SIGTERM of `timeout` or `kill`). Before, a bench stopped by a
// signal left its services running (Node's default action for SIGTERM exits at once and runs no
// `exit` handler): a sandbox service with its prepared containers, a gateway holding its port, a
// child keeping the caller's output pipe open, so that a shell waiting on it hung.
//
// - When the bench's process exits, each of its child processes still running gets SIGTERM: found
//   in /proc (the benches are Linux-only), so a child started anywhere (a bench's own fork,
//   bench/lib, packages/test-support) is covered without registering it. SIGTERM, not SIGKILL:
//   each service then shuts down as it does in production (the sandbox removes its containers),
//   after the bench has gone.
// - SIGINT and SIGTERM exit the bench (130, 143) after the stops registered with stopOnSignal:
//   async clean-ups beyond a process's own (the sandbox's JetStream buckets and state dir), run
//   newest first, 15 s at most in all.
import { readdirSync, readFileSync } from 'node:fs';

const STOPS_MAX_MS = 15_000;
const stops = [];

/** The pids whose parent is this process (the 4th field of /proc/<pid>/stat, after the command's parentheses). */
function childPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) pids.push(Number(entry));
    } catch {
      // Ended while the list was read.
    }
  }
  return pids;
}

process.on('exit', () => {
  for (const pid of childPids()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
});

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    const all = (async () => {
      for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
    })();
    const limit = new Promise((r) => setTimeout(r, STOPS_MAX_MS).unref());
    void Promise.race([all, limit]).finally(() => process.exit(code));
  });
}

/** Registers an async stop to run on SIGINT or SIGTERM; returns it wrapped to run at most once. */
export function stopOnSignal(stop) {
  let result;
  const once = () => {
    const i = stops.indexOf(once);
    if (i !== -1) stops.splice(i, 1);
    result ??= Promise.resolve().then(stop);
    return result;
  };
  stops.push(once);
  return once;
}
