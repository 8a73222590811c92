// Fixture corpora for the local/CI SearXNG (infra/searx/settings.local.yml), on 127.0.0.1 only.
//
//   GET /<corpus>/search?q=&time_range=&language=  → {results:[{url,title,content,published}]}
//   GET /pages/<slug>                              → an HTML page (what snippet verification fetches)
//   GET /healthz                                   → ok
//
// Failure on demand, per query so that parallel tests never disturb each other: a query holding the
// token `zzfail-<corpus>` makes that corpus answer 500, `zzfail-all` makes every corpus answer 500.
// (500, not 429/403: searx suspends an engine for an hour on those whatever ban_time_on_fail says.)
// A document's `age` ("-2h", "-3d") is relative to now, so freshness tests never go stale.
// `zzbulk` matches 25 generated documents (limit tests); `zznonce-<x>` tokens are ignored.
// Plain node, no dependencies.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

const port = Number(process.env.FIXTURE_PORT ?? process.argv[2] ?? 8891);
const here = new URL('.', import.meta.url).pathname;
const base = `http://127.0.0.1:${port}`;
const load = (name) => JSON.parse(readFileSync(`${here}corpora/${name}.json`, 'utf8'));

const corpora = { web: load('web'), news: load('news'), flaky: load('flaky'), onion: load('onion') };
for (let i = 1; i <= 25; i++) {
  corpora.web.push({ url: `{base}/pages/bulk-${i}`, title: `zzbulk document ${i}`, content: `zzbulk filler number ${i}`, age: null });
}
const pages = load('pages');

const UNIT_MS = { h: 3_600_000, d: 86_400_000 };
const RANGE_MS = { day: 86_400_000, week: 7 * 86_400_000, month: 31 * 86_400_000, year: 366 * 86_400_000 };

function publishedAt(age, now) {
  const m = /^-(\d+)([hd])$/.exec(age ?? '');
  return m ? new Date(now - Number(m[1]) * UNIT_MS[m[2]]) : null;
}

function search(corpus, params) {
  const tokens = (params.get('q') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (tokens.includes('zzfail-all') || tokens.includes(`zzfail-${corpus}`)) return null;
  // zznonce-* makes a query unique (benchmarks bypass caches with it) without changing its matches.
  const terms = tokens.filter((t) => !t.startsWith('zzfail-') && !t.startsWith('zznonce-'));
  if (terms.length === 0) return [];
  const now = Date.now();
  const range = RANGE_MS[params.get('time_range') ?? ''];
  return corpora[corpus]
    .map((doc) => ({ doc, published: publishedAt(doc.age, now) }))
    .filter(({ doc }) => terms.every((t) => `${doc.title} ${doc.content}`.toLowerCase().includes(t)))
    .filter(({ published }) => !range || (published !== null && now - published.getTime() <= range))
    .map(({ doc, published }) => ({
      url: doc.url.replace('{base}', base),
      title: doc.title,
      content: doc.content,
      ...(published ? { published: published.toISOString() } : {}),
    }));
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', base);
  const [, first, second] = url.pathname.split('/');
  if (url.pathname === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  if (first in corpora && second === 'search') {
    const results = search(first, url.searchParams);
    if (results === null) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"failing on demand"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    return;
  }
  if (first === 'pages' && second) {
    const page = pages[second] ?? (second.startsWith('bulk-') ? { title: second, body: `<p>zzbulk filler number ${second.slice(5)}</p>` } : undefined);
    if (page) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="en"><head><title>${page.title}</title></head><body><article>${page.body}</article></body></html>`);
      return;
    }
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
});

server.listen(port, '127.0.0.1', () => process.stdout.write(`fixture corpora on ${base}\n`));
for (const sig of ['SIGTERM', 'SIGINT']) process.once(sig, () => server.close(() => process.exit(0)));
