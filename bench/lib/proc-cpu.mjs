// Whole-process CPU time of another process, every thread (main, libuv pool, V8 helpers), in
// seconds: /proc/<pid>/task/<tid>/schedstat counts nanoseconds, where /proc/<pid>/stat counts
// 10 ms ticks (several % of a short round). Its resident memory; percentiles.
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

export function cpuSeconds(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {} // the thread ended between the listing and the read
    }
    if (ns > 0) return ns / 1e9;
  } catch {}
  // A kernel without schedstat: utime and stime of /proc/<pid>/stat (fields 14 and 15, 1-based,
  // counted after the ")" of the command name), in ticks of USER_HZ (100 on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Resident set size of another process, in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid) {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** The p-th percentile (0..100) by nearest rank; NaN for no values. */
export const percentile = (xs, p) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
