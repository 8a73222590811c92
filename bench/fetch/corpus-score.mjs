// bench/fetch: extraction quality and speed on the corpus (apps/fetch/test/fixtures/corpus,
// written by bench/fetch/corpus/make-corpus.mjs). Quality: 4-token shingle precision and recall
// of the extracted markdown (syntax stripped) against each page's expected body, averaged over
// pages, and the F1 of those means. Speed: each page extracted RUNS times, the page's median
// taken; the median and p95 of those over the corpus.
// Usage: node bench/fetch/corpus-score.mjs [--extractor path/to/html-extractor.js]... [--off rule,rule] [--pages]
// Beside each score, the markdown structure checks of structure-checks.mjs (tables, code fences,
// escapes, heading anchors, math), which the token scores cannot see.
// Several --extractor: all are run alternately page by page, so that a shared machine's load
// weighs on each the same (before/after comparisons). --off turns rules of
// apps/fetch/src/extract/content-rules.ts off, to measure each one's gain.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { macroF1, markdownToText, shingleF1 } from '../../apps/fetch/dist/extract/text-f1.js';
import { scoreStructure } from './structure-checks.mjs';

const RUNS = Number(process.env.BENCH_CORPUS_RUNS ?? 7);
const DIR = fileURLToPath(new URL('../../apps/fetch/test/fixtures/corpus/', import.meta.url));
const DEFAULT = new URL('../../apps/fetch/dist/extract/html-extractor.js', import.meta.url).href;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { median: q(0.5), p95: q(0.95) };
};

export function loadCorpus() {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.html'))
    .sort()
    .map((f) => ({ name: f.slice(0, -5), html: readFileSync(`${DIR}${f}`, 'utf8'), expected: readFileSync(`${DIR}${f.slice(0, -5)}.expected.txt`, 'utf8') }));
}

/** Scores each extractor on the corpus, timing them alternately; returns one result per extractor. */
export function scoreCorpus(extractors, pages = loadCorpus(), runs = RUNS) {
  const results = extractors.map(() => ({ rows: [], perPage: [] }));
  for (const page of pages) {
    const url = `https://corpus.example/${page.name}`;
    const times = extractors.map(() => []);
    extractors.forEach((x, i) => results[i].rows.push([page.name, shingleF1(markdownToText(x.extract(page.html, url).markdown), page.expected)]));
    for (let r = 0; r < runs; r++) {
      extractors.forEach((x, i) => {
        const t = performance.now();
        x.extract(page.html, url);
        times[i].push(performance.now() - t);
      });
    }
    times.forEach((ts, i) => results[i].perPage.push(stats(ts).median));
  }
  return results.map(({ rows, perPage }) => ({ rows, score: macroF1(rows.map(([, s]) => s)), speed: stats(perPage), pages: pages.length }));
}

export const describeScore = ({ score: m, speed, pages }, label) =>
  `${label}: ${pages} pages, shingle (4) precision ${m.precision.toFixed(4)}  recall ${m.recall.toFixed(4)}  F1 ${m.f1.toFixed(4)}; ` +
  `extraction per page median ${speed.median.toFixed(2)} ms  p95 ${speed.p95.toFixed(2)} ms`;

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const paths = args.flatMap((a, i) => (args[i - 1] === '--extractor' ? [pathToFileURL(resolve(a)).href] : []));
  const offAt = args.indexOf('--off');
  const off = offAt >= 0 ? args[offAt + 1].split(',') : [];
  const modules = paths.length ? paths : [DEFAULT];
  const extractors = [];
  for (const m of modules) {
    const { HtmlExtractor } = await import(m);
    extractors.push(new HtmlExtractor(Object.fromEntries(off.map((r) => [r, false]))));
  }
  const results = scoreCorpus(extractors);
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; each page's median of ${RUNS} runs${off.length ? `; rules off: ${off.join(', ')}` : ''}`,
  );
  results.forEach((r, i) => {
    if (args.includes('--pages')) {
      for (const [name, s] of [...r.rows].sort((a, b) => a[1].f1 - b[1].f1))
        console.log(`  ${name.padEnd(40)} P ${s.precision.toFixed(3)}  R ${s.recall.toFixed(3)}  F1 ${s.f1.toFixed(3)}`);
    }
    console.log(describeScore(r, modules[i].replace(/^.*\/apps\//, 'apps/')));
    // Tables, fences, escapes, anchors, math: what the token scores above cannot see.
    const structure = scoreStructure(extractors[i]);
    console.log(
      `  structure: ${structure.passed}/${structure.total} checks (bench/fetch/structure-checks.mjs)${args.includes('--pages') && structure.failed.length ? `; failing: ${structure.failed.join('; ')}` : ''}`,
    );
  });
}
