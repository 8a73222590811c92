// bench/fetch: extraction quality and speed on the corpus (apps/fetch/test/fixtures/corpus,
// written by bench/fetch/corpus/make-corpus.mjs). Quality: 4-token shingle precision and recall
// of the extracted markdown (syntax stripped) against each page's expected body, averaged over
// pages, and the F1 of those means. Speed: each page extracted RUNS times, the page's median
// taken; the median and p95 of those over the corpus.
// Usage: node bench/fetch/corpus-score.mjs [--extractor path/to/html-extractor.js] [--off rule,rule] [--pages]
// --off turns rules of apps/fetch/src/extract/content-rules.ts off, to measure each one's gain.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { macroF1, markdownToText, shingleF1 } from '../../apps/fetch/dist/extract/text-f1.js';

const args = process.argv.slice(2);
const at = args.indexOf('--extractor');
const modulePath = at >= 0 ? pathToFileURL(resolve(args[at + 1])).href : new URL('../../apps/fetch/dist/extract/html-extractor.js', import.meta.url).href;
const RUNS = Number(process.env.BENCH_CORPUS_RUNS ?? 7);
const DIR = fileURLToPath(new URL('../../apps/fetch/test/fixtures/corpus/', import.meta.url));

const { HtmlExtractor } = await import(modulePath);
const offAt = args.indexOf('--off');
const off = offAt >= 0 ? args[offAt + 1].split(',') : [];
const extractor = new HtmlExtractor(Object.fromEntries(off.map((r) => [r, false])));
const names = readdirSync(DIR).filter((f) => f.endsWith('.html')).map((f) => f.slice(0, -5)).sort();
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { median: q(0.5), p95: q(0.95) };
};

const rows = [];
const perPage = [];
for (const name of names) {
  const html = readFileSync(`${DIR}${name}.html`, 'utf8');
  const expected = readFileSync(`${DIR}${name}.expected.txt`, 'utf8');
  const url = `https://corpus.example/${name}`;
  const got = extractor.extract(html, url);
  const score = shingleF1(markdownToText(got.markdown), expected);
  rows.push([name, score]);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    extractor.extract(html, url);
    times.push(performance.now() - t);
  }
  perPage.push(stats(times).median);
}
const m = macroF1(rows.map(([, s]) => s));
const speed = stats(perPage);
if (args.includes('--pages')) {
  for (const [name, s] of [...rows].sort((a, b) => a[1].f1 - b[1].f1)) console.log(`${name.padEnd(40)} P ${s.precision.toFixed(3)}  R ${s.recall.toFixed(3)}  F1 ${s.f1.toFixed(3)}`);
}
console.log(`corpus: ${names.length} pages, ${modulePath.replace(/^.*\/apps\//, 'apps/')}${off.length ? ` without ${off.join(', ')}` : ''}; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`shingle (4) precision ${m.precision.toFixed(4)}  recall ${m.recall.toFixed(4)}  F1 ${m.f1.toFixed(4)}`);
console.log(`extraction per page: median ${speed.median.toFixed(2)} ms  p95 ${speed.p95.toFixed(2)} ms  (each page's median of ${RUNS} runs)`);
