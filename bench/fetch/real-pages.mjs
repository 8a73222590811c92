// bench/fetch: extraction quality and speed on real pages, Zyte's article extraction benchmark
// (github.com/scrapinghub/article-extraction-benchmark: 181 news and blog pages with a human
// ground truth of the article body). The dataset is third-party and is not in this repository:
// clone it and pass its directory (see bench/fetch/README.md).
//
// Drael's extractor is run as the fetch service runs it (HtmlExtractor.extract from the built
// apps/fetch/dist, the page's URL as base, as page/fetch-page.service.ts calls it with the final
// URL), and raw @mozilla/readability 0.6.0 (apps/fetch's dependency) on a linkedom parse of the
// same HTML as a peer, in the same run, alternated page by page. Scored with the benchmark's own
// metric, implemented here so no python is needed: `\w+` tokens (case kept), 4-token shingles as
// bags, per page tp/fp/fn normalised, precision and recall averaged over pages, F1 of the means.
// Drael delivers markdown: scored as delivered ("md") and as plain text ("text": markdown syntax,
// link URLs and images stripped), the latter being the fair comparison with extractors that give
// an element's text content (Readability's textContent, trafilatura's text).
//
// Usage: node bench/fetch/real-pages.mjs DATASET_DIR [--half a|b] [--pages] [--runs N]
//          [--extractor [label=]path/to/html-extractor.js]... [--no-output]
// Halves: the ids sorted, A = even index, B = odd index (develop on A, check on B).
// Writes DATASET_DIR/output/drael*.json and readability-linkedom.json for evaluate.py when all
// pages are run, and DATASET_DIR/half-{a,b}/{ground-truth.json,output/} so that evaluate.py can
// score each half (cd DATASET_DIR/half-a && python3 ../evaluate.py).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { markdownToText } from '../../apps/fetch/dist/extract/text-f1.js';

const requireFetch = createRequire(new URL('../../apps/fetch/package.json', import.meta.url));
const { Readability } = requireFetch('@mozilla/readability');
const { parseHTML } = await import(pathToFileURL(requireFetch.resolve('linkedom')).href);
const DEFAULT = new URL('../../apps/fetch/dist/extract/html-extractor.js', import.meta.url).href;

// ---- the benchmark's metric (evaluate.py), in JS ----
// Python's \w on str: letters, digits/numerics and the underscore.
const TOKEN = /[\p{L}\p{N}_]+/gu;
const tokenize = (text) => (text ?? '').match(TOKEN) ?? [];

function shingleCounts(text, n = 4) {
  const toks = tokenize(text);
  const counts = new Map();
  for (let i = 0; i < Math.max(1, toks.length - n + 1); i++) {
    const s = toks.slice(i, i + n);
    if (s.length === 0) continue;
    const key = s.join('\u0001');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** evaluate.py's string_shingle_matching: normalised [tp, fp, fn]. */
export function tpFpFn(truth, pred) {
  const t = shingleCounts(truth);
  const p = shingleCounts(pred);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const key of new Set([...t.keys(), ...p.keys()])) {
    const tc = t.get(key) ?? 0;
    const pc = p.get(key) ?? 0;
    tp += Math.min(tc, pc);
    fp += Math.max(0, pc - tc);
    fn += Math.max(0, tc - pc);
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [0, 0, 0];
}

const precisionOf = ([tp, fp, fn]) => (fp === 0 && fn === 0 ? 1 : tp === 0 && fp === 0 ? 0 : tp / (tp + fp));
const recallOf = ([tp, fp, fn]) => (fp === 0 && fn === 0 ? 1 : tp === 0 && fn === 0 ? 0 : tp / (tp + fn));
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** evaluate.py's metrics_from_tp_fp_fns (precision over pages with a prediction, recall over pages with a truth). */
export function metrics(rows) {
  const precision = mean(rows.filter(([tp, fp]) => tp + fp > 0).map(precisionOf));
  const recall = mean(rows.filter(([tp, , fn]) => tp + fn > 0).map(recallOf));
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}

/** The page's F1 alone, for the per-page listing. */
const pageF1 = (row) => {
  const p = precisionOf(row);
  const r = recallOf(row);
  return p + r ? (2 * p * r) / (p + r) : 0;
};

/**
 * Markdown as plain text, as the other extractors give it (an element's text content): images
 * out (their alt is an attribute, never part of the page's text), then markdownToText (syntax
 * out, links keep their text), emphasis marks, table rules and bare URLs.
 */
export function plainText(md) {
  return markdownToText(md.replace(/!\[[^\]]*\]\([^)]*\)/g, ' '))
    .replace(/<(https?:[^>\s]*)>/g, ' ')
    .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)([^*_\n]*?\S)[*_](?![\w*])/g, '$1$2')
    .replace(/^\s*\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$/gm, ' ')
    .replace(/^\s*(?:[-*_]\s*){3,}$/gm, ' ');
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? 0;
  return { median: q(0.5), p95: q(0.95) };
};

function readabilityText(html, url) {
  const { document } = parseHTML(html);
  // Readability resolves links against these; linkedom leaves them unset.
  Object.defineProperty(document, 'baseURI', { value: url, configurable: true });
  Object.defineProperty(document, 'documentURI', { value: url, configurable: true });
  try {
    return new Readability(document).parse()?.textContent ?? '';
  } catch {
    return '';
  }
}

export function loadDataset(dir) {
  const truth = JSON.parse(readFileSync(join(dir, 'ground-truth.json'), 'utf8'));
  const ids = Object.keys(truth).sort();
  return ids.map((id, i) => ({
    id,
    half: i % 2 === 0 ? 'a' : 'b',
    url: truth[id].url,
    truth: truth[id].articleBody ?? '',
    html: gunzipSync(readFileSync(join(dir, 'html', `${id}.html.gz`))).toString('utf8'),
  }));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const valueOf = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const flagged = new Set(['--half', '--runs', '--extractor']);
  const dir = args.find((a, i) => !a.startsWith('--') && !flagged.has(args[i - 1]));
  if (!dir) {
    console.error('usage: node bench/fetch/real-pages.mjs DATASET_DIR [--half a|b] [--pages] [--runs N] [--extractor [label=]path]... [--no-output]');
    process.exit(2);
  }
  const half = valueOf('--half');
  const runs = Number(valueOf('--runs') ?? process.env.BENCH_REAL_RUNS ?? 3);
  const specs = args.flatMap((a, i) => (args[i - 1] === '--extractor' ? [a] : []));
  const extractorSpecs = specs.length
    ? specs.map((s, i) => {
        const [label, path] = s.includes('=') ? s.split(/=(.*)/s) : [specs.length > 1 ? `drael${i + 1}` : 'drael', s];
        return { label, href: pathToFileURL(resolve(path)).href };
      })
    : [{ label: 'drael', href: DEFAULT }];

  const all = loadDataset(resolve(dir));
  const pages = half ? all.filter((p) => p.half === half) : all;
  // Each extractor gives the text a model would get; Drael's markdown is also scored as plain text.
  const variants = [];
  for (const { label, href } of extractorSpecs) {
    const { HtmlExtractor } = await import(href);
    const x = new HtmlExtractor();
    variants.push({ label, run: (p) => x.extract(p.html, p.url).markdown, outputs: [`${label}-md`, `${label}-text`], texts: (md) => [md, plainText(md)] });
  }
  variants.push({ label: 'readability', run: (p) => readabilityText(p.html, p.url), outputs: ['readability-linkedom'], texts: (t) => [t] });

  const results = new Map(variants.flatMap((v) => v.outputs.map((o) => [o, { rows: [], texts: {} }])));
  const times = new Map(variants.map((v) => [v.label, []]));
  for (const page of pages) {
    const perRun = variants.map(() => []);
    for (let r = 0; r < runs; r++) {
      variants.forEach((v, i) => {
        const t = performance.now();
        const out = v.run(page);
        perRun[i].push(performance.now() - t);
        if (r === 0) {
          v.texts(out).forEach((text, k) => {
            const res = results.get(v.outputs[k]);
            res.texts[page.id] = text;
            res.rows.push({ id: page.id, half: page.half, url: page.url, row: tpFpFn(page.truth, text) });
          });
        }
      });
    }
    variants.forEach((v, i) => times.get(v.label).push(stats(perRun[i]).median));
  }

  console.log(
    `${pages.length} pages${half ? ` (half ${half.toUpperCase()})` : ''}; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; each page's median of ${runs} runs`,
  );
  const fmt = (m) => `F1 ${m.f1.toFixed(4)}  P ${m.precision.toFixed(4)}  R ${m.recall.toFixed(4)}`;
  for (const [name, { rows }] of results) {
    if (args.includes('--pages')) {
      console.log(`${name}, per page, worst first:`);
      for (const { id, half: h, url, row } of [...rows].sort((a, b) => pageF1(a.row) - pageF1(b.row)))
        console.log(`  ${h} ${id.slice(0, 10)} F1 ${pageF1(row).toFixed(3)}  P ${precisionOf(row).toFixed(3)}  R ${recallOf(row).toFixed(3)}  ${url}`);
    }
    const halves = half ? [] : ['a', 'b'].map((h) => `${h.toUpperCase()}: ${fmt(metrics(rows.filter((r) => r.half === h).map((r) => r.row)))}`);
    console.log(`${name.padEnd(22)} ${half ? half.toUpperCase() : 'all'}: ${fmt(metrics(rows.map((r) => r.row)))}${halves.length ? `   | ${halves.join('   | ')}` : ''}`);
  }
  for (const [label, ts] of times) {
    const s = stats(ts);
    console.log(`time per page ${label.padEnd(12)} median ${s.median.toFixed(2)} ms  p95 ${s.p95.toFixed(2)} ms`);
  }

  if (!half && !args.includes('--no-output')) {
    const root = resolve(dir);
    const write = (d, name, ids, texts) => {
      mkdirSync(join(d, 'output'), { recursive: true });
      writeFileSync(join(d, 'output', `${name}.json`), JSON.stringify(Object.fromEntries(ids.map((id) => [id, { articleBody: texts[id] ?? '' }]))));
    };
    const truth = JSON.parse(readFileSync(join(root, 'ground-truth.json'), 'utf8'));
    for (const [name, { texts }] of results) write(root, name, Object.keys(truth), texts);
    for (const h of ['a', 'b']) {
      const d = join(root, `half-${h}`);
      const ids = all.filter((p) => p.half === h).map((p) => p.id);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'ground-truth.json'), JSON.stringify(Object.fromEntries(ids.map((id) => [id, truth[id]]))));
      for (const [name, { texts }] of results) write(d, name, ids, texts);
    }
    console.log(`wrote ${basename(root)}/output/*.json and half-{a,b}/ (evaluate.py: cd ${root} && python3 evaluate.py --n-bootstrap 200)`);
  }
}
