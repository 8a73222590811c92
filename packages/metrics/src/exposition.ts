/**
 * Reads one sample out of a text exposition (what a scrape returns): the value of `name` whose
 * labels include every pair given, summed over the rest; 0 when there is none. Tests compare two
 * scrapes with it; an operator's script can too.
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = parseLabels(m[3] ?? '');
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/** The metric names a text exposition defines (its `# TYPE` lines). */
export function metricNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) /gm)) out.add(m[1]!);
  return out;
}

function parseLabels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) out[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return out;
}
