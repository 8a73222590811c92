// bench/fetch: latency of the fetch service's HTTP path and browser path (warm pool) on a
// 100 KB local article, plus extraction F1 on the fixture set. Loopback only, bounded runs.
// Needs: `pnpm --filter @drael/fetch build`, Chromium at /usr/lib/chromium/chromium, Redis not needed.
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FetchRuntime } from '../../apps/fetch/dist/fetch.runtime.js';
import { configSchema } from '../../apps/fetch/dist/config/config.schema.js';
import { HtmlExtractor } from '../../apps/fetch/dist/extract/html-extractor.js';
import { markdownToText, tokenF1 } from '../../apps/fetch/dist/extract/text-f1.js';
import { describeScore, scoreCorpus } from './corpus-score.mjs';

const HTTP_RUNS = Number(process.env.BENCH_HTTP_RUNS ?? 60);
const BROWSER_RUNS = Number(process.env.BENCH_BROWSER_RUNS ?? 20);
const PAGES_DIR = fileURLToPath(new URL('../../apps/fetch/test/fixtures/pages/', import.meta.url));

function article100k() {
  const nav = '<header><nav>' + Array.from({ length: 40 }, (_, i) => `<a href="/s${i}">Section ${i}</a>`).join(' ') + '</nav></header>';
  const aside = '<aside><h3>Popular</h3><ul>' + Array.from({ length: 30 }, (_, i) => `<li><a href="/p${i}">Popular story number ${i}</a></li>`).join('') + '</ul></aside>';
  let body = '';
  for (let i = 0; body.length < 100_000; i++) {
    if (i % 6 === 0) body += `<h2>Part ${i / 6 + 1}</h2>`;
    body += `<p>Paragraph ${i}: the harbour authority published its annual report today, showing that container traffic grew for the third year in a row while passenger numbers returned to their level before the closure of the northern terminal. <a href="/ref${i}">Details</a>.</p>`;
  }
  const html = `<!doctype html><html lang="en"><head><title>Annual harbour report</title><meta name="description" content="Bench page"></head><body>${nav}<main><article><h1>Annual harbour report</h1>${body}</article>${aside}</main><footer>Footer text</footer><script>window.x = 1;</script></body></html>`;
  return html;
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { median: q(0.5), p95: q(0.95), n: s.length };
};
const ms = (x) => `${x.toFixed(1)} ms`;

const page = article100k();
const pages = readdirSync(PAGES_DIR)
  .filter((f) => f.endsWith('.html'))
  .map((f) => f.slice(0, -5))
  .sort();
const CHALLENGE =
  '<!doctype html><html><head><title>Just a moment...</title></head><body><p>Checking your browser.</p><script>document.cookie="clearance=ok; path=/"; setTimeout(() => location.reload(), 50);</script></body></html>';
const server = createServer((req, res) => {
  if (req.url.startsWith('/article')) return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  const name = req.url.replace(/^\/pages\//, '');
  if (!pages.includes(name)) return res.writeHead(404).end();
  if (name.startsWith('challenge-') && !/clearance=ok/.test(req.headers.cookie ?? '')) {
    return res.writeHead(503, { 'content-type': 'text/html' }).end(CHALLENGE);
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(`${PAGES_DIR}${name}.html`));
});
await new Promise((r) => server.listen(0, '127.0.0.2', r));
const origin = `http://127.0.0.2:${server.address().port}`;

// The service's own defaults (the config schema, as its environment is read), with the bench's few settings.
const runtime = new FetchRuntime(
  configSchema.parse({
    FETCH_CACHE_PREFIX: 'bench:',
    TOR_SOCKS_URL: '',
    CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? '/usr/lib/chromium/chromium',
    FETCH_BROWSER: 'on',
    // The bench page lives on 127.0.0.2; only that address is opened in the guard.
    FETCH_TEST_ALLOW_CIDRS: '127.0.0.2/32',
  }),
  { warn() {}, info() {} },
  { cache: false },
);

try {
  console.log(
    `page: ${(Buffer.byteLength(page) / 1024).toFixed(0)} KB article; load average ${(await import('node:os'))
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );

  // Extraction alone (no network): the floor under the HTTP path.
  const extractor = new HtmlExtractor();
  const ext = [];
  const extCpu = [];
  for (let i = 0; i < 5; i++) extractor.extract(page, `${origin}/article`);
  for (let i = 0; i < HTTP_RUNS; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    extractor.extract(page, `${origin}/article`);
    const used = process.cpuUsage(c);
    ext.push(performance.now() - t);
    extCpu.push((used.user + used.system) / 1000);
  }

  const http = [];
  const httpCpu = [];
  for (let i = 0; i < 5; i++) await runtime.pages.fetch({ url: `${origin}/article?w${i}`, render: 'http' });
  for (let i = 0; i < HTTP_RUNS; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    await runtime.pages.fetch({ url: `${origin}/article?h${i}`, render: 'http' });
    const used = process.cpuUsage(c);
    http.push(performance.now() - t);
    // CPU time of this process (service side and the page server together): what a quiet
    // machine would see as wall time, since the run is single-threaded and loopback only.
    httpCpu.push((used.user + used.system) / 1000);
  }

  await runtime.browser.warm();
  const browserWarm = [];
  for (let i = 0; i < 3; i++) await runtime.pages.fetch({ url: `${origin}/article?bw${i}`, render: 'browser', tenant: 'bench' });
  for (let i = 0; i < BROWSER_RUNS; i++) {
    const t = performance.now();
    await runtime.pages.fetch({ url: `${origin}/article?b${i}`, render: 'browser', tenant: 'bench' });
    browserWarm.push(performance.now() - t);
  }
  const browserFresh = [];
  for (let i = 0; i < Math.max(3, Math.floor(BROWSER_RUNS / 4)); i++) {
    await new Promise((r) => setTimeout(r, 1500)); // let the spare context be made, as between real requests
    const t = performance.now();
    await runtime.pages.fetch({ url: `${origin}/article?f${i}`, render: 'browser' });
    browserFresh.push(performance.now() - t);
  }

  const f1 = [];
  for (const name of pages) {
    const expected = readFileSync(`${PAGES_DIR}${name}.expected.txt`, 'utf8');
    const got = await runtime.pages.fetch({ url: `${origin}/pages/${name}` });
    f1.push([name, tokenF1(markdownToText(got.content), expected).f1]);
  }
  const meanF1 = f1.reduce((a, [, v]) => a + v, 0) / f1.length;

  // The extraction corpus: quality (4-token shingle P/R/F1, macro-averaged) beside speed per page.
  const [corpus] = scoreCorpus([extractor]);

  const e = stats(ext),
    ec = stats(extCpu),
    h = stats(http),
    hc = stats(httpCpu),
    bw = stats(browserWarm),
    bf = stats(browserFresh);
  console.log(`extraction only (linkedom+readability+turndown): median ${ms(e.median)}  p95 ${ms(e.p95)}  (n=${e.n})`);
  console.log(`extraction only, CPU time:                         median ${ms(ec.median)}  p95 ${ms(ec.p95)}`);
  console.log(`HTTP path (render=http):                          median ${ms(h.median)}  p95 ${ms(h.p95)}  (n=${h.n})  target <= 30 ms median`);
  console.log(`HTTP path, CPU time per fetch:                     median ${ms(hc.median)}  p95 ${ms(hc.p95)}  (includes the page server)`);
  console.log(`browser path, warm tenant context:                median ${ms(bw.median)}  p95 ${ms(bw.p95)}  (n=${bw.n})  target <= 400 ms median`);
  console.log(`browser path, fresh context (no tenant):          median ${ms(bf.median)}  p95 ${ms(bf.p95)}  (n=${bf.n})`);
  console.log(
    `ratio browser warm / HTTP (median): ${(bw.median / h.median).toFixed(1)}x; HTTP / extraction only: ${(h.median / e.median).toFixed(2)}x wall, ${(hc.median / ec.median).toFixed(2)}x CPU`,
  );
  console.log(describeScore(corpus, 'extraction corpus (test/fixtures/corpus)'));
  console.log(
    `extraction F1 on ${f1.length} fixture pages (render=auto): mean ${meanF1.toFixed(3)}  min ${Math.min(...f1.map(([, v]) => v)).toFixed(3)} (${f1.sort((a, b) => a[1] - b[1])[0][0]})  target >= 0.95`,
  );
} finally {
  await runtime.close();
  server.close();
}
