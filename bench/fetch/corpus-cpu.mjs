// bench/fetch: CPU time per extraction on the corpus, two extractors alternated page by page
// (which goes first alternates by round), each page's median over the rounds; prints the sum of
// those medians, the median page, and the pages that changed most. CPU time (process.cpuUsage)
// rather than wall time: on a shared machine it moves less with the load.
// Usage: node bench/fetch/corpus-cpu.mjs BEFORE/html-extractor.js AFTER/html-extractor.js [rounds=21]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadCorpus } from './corpus-score.mjs';

const [beforePath, afterPath, roundsArg] = process.argv.slice(2);
if (!beforePath || !afterPath) throw new Error('usage: node bench/fetch/corpus-cpu.mjs BEFORE/html-extractor.js AFTER/html-extractor.js [rounds]');
const load = async (p) => new (await import(pathToFileURL(resolve(p)).href)).HtmlExtractor();
const extractors = { before: await load(beforePath), after: await load(afterPath) };
const pages = loadCorpus();
const rounds = Number(roundsArg ?? 21);
const times = { before: new Map(), after: new Map() };
for (let r = 0; r < rounds; r++) {
  for (const page of pages) {
    const order = r % 2 ? ['before', 'after'] : ['after', 'before'];
    for (const name of order) {
      const start = process.cpuUsage();
      extractors[name].extract(page.html, `https://corpus.example/${page.name}`);
      const used = process.cpuUsage(start);
      times[name].set(page.name, [...(times[name].get(page.name) ?? []), (used.user + used.system) / 1000]);
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perPage = (name) => new Map([...times[name]].map(([page, xs]) => [page, median(xs)]));
const before = perPage('before');
const after = perPage('after');
const sum = (m) => [...m.values()].reduce((n, x) => n + x, 0);
console.log(
  `${pages.length} pages, ${rounds} rounds: sum of per-page CPU medians ${sum(before).toFixed(1)} -> ${sum(after).toFixed(1)} ms (${(sum(after) / sum(before)).toFixed(3)}x); ` +
    `median page ${median([...before.values()]).toFixed(2)} -> ${median([...after.values()]).toFixed(2)} ms`,
);
for (const [page, b] of [...before].sort((x, y) => after.get(y[0]) - y[1] - (after.get(x[0]) - x[1])).slice(0, 6))
  console.log(`  ${page.padEnd(40)} ${b.toFixed(2)} -> ${after.get(page).toFixed(2)} ms`);
