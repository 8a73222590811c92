import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// The structure of the markdown a model reads, on the page shapes of the extraction report
// (/work/h-extract/REPORT.md, 2026-12-03: Sphinx/RTD with Pygments, Docusaurus with
// prism-react-renderer, MDN, a GitHub README, MediaWiki 1.4x, KaTeX, an ASCII table in <pre>,
// a definition/table page, legacy encodings). The token scores of extraction.spec.ts and of the
// corpus cannot see a flattened table, an unfenced code block or a backslash inside an
// identifier; these checks can. Pages are served as stored bytes with the headers real sites
// send (no charset at all on the legacy ones), and fetched over HTTP through the service.
const DIR = fileURLToPath(new URL('./fixtures/structure/', import.meta.url));
// The content types the report's page server sent (probe/server.mjs).
const TYPES: Record<string, string> = {
  'legacy-1252.html': 'text/html',
  'legacy-shift_jis.html': 'text/html',
  'legacy-euc-jp.html': 'text/html',
  'legacy-koi8-r.html': 'text/html',
  'legacy-windows-1253.html': 'text/html',
  'plain-1252.txt': 'text/plain',
  'feed-latin1.xml': 'application/rss+xml',
};

let site: FixtureServer;
let runtime: FetchRuntime;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const name = (req.url ?? '').replace(/^\//, '').replace(/[?#].*$/, '');
    let body: Buffer;
    try {
      body = readFileSync(`${DIR}${name}`);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such fixture');
      return;
    }
    const type = TYPES[name] ?? (extname(name) === '.html' ? 'text/html; charset=utf-8' : 'application/octet-stream');
    res.writeHead(200, { 'content-type': type }).end(body);
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, browser: false, cache: false });
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

const get = (name: string) => runtime.pages.fetch({ url: site.url(`/${name}`), render: 'http' });

describe('tables (report finding 1)', () => {
  it('a data table is a GFM table with its header row', async () => {
    const { content } = await get('docs-rtd.html');
    expect(content).toMatch(/^\| Option \| Default \| Meaning \|\n\| --- \| --- \| --- \|\n\| `min_size` \| 1 \| Connections opened at start and kept \|$/m);
  });

  it('a table without a header row still reads as rows', async () => {
    const { content } = await get('wiki.html');
    expect(content).toMatch(/^\| 1 \| 2\.4048 \| 3\.8317 \|/m);
    const { content: readme } = await get('github-readme.html');
    expect(readme).toMatch(/^\| `tokio` \| off \|/m);
    const { content: knots } = await get('structure.html');
    expect(knots).toMatch(/^\| Bowline \| A fixed loop/m);
  });

  it('an infobox (one th and one td per row) is label: value lines', async () => {
    const { content } = await get('wiki.html');
    expect(content).toMatch(/^Named after: \[?Friedrich Bessel/m);
  });
});

describe('code blocks (report finding 2)', () => {
  it('Pygments: fenced, language from the wrapper, no line numbers, no escapes, indentation kept', async () => {
    const { content } = await get('docs-rtd.html');
    expect(content).toContain('```python\nimport asyncio\nfrom pgwire import Pool\n');
    expect(content).toContain('\n    pool = await Pool.create("postgresql://app@db/app", min_size=2, max_size=10)\n');
    expect(content).toMatch(/```console\n\$ psql -c "SELECT count\(\*\) FROM pg_stat_activity/);
  });

  it('prism-react-renderer: one line per <br>, language from <pre>', async () => {
    const { content } = await get('docs-docusaurus.html');
    expect(content).toContain('```bash\nnpm install --global @flarekit/cli\nflarekit --version\n```');
    expect(content).toMatch(/import \{ defineConfig \} from '@flarekit\/core';\n\nexport default defineConfig\(\{\n {2}region: 'eu-west',/);
  });

  it('MDN (brush: js) and GitHub (highlight-source-rust) keep their language', async () => {
    expect((await get('docs-mdn.html')).content).toMatch(/```js\nconst arr1 = \[1, 2, 1\];/);
    const { content } = await get('github-readme.html');
    expect(content).toMatch(/```rust\nuse ripq::\{Queue, Job\};/);
    expect(content).toContain('fn main() -> ripq::Result<()> {');
  });

  it('a plain <pre> (ASCII table, tree) is fenced and unescaped', async () => {
    const { content } = await get('pre-ascii.html');
    expect(content).toMatch(/```\n\+-----------\+/);
    expect(content).toContain('├── producer.go\n├── consumer.go\n└── results/\n    ├── nats.csv');
    expect(content).not.toMatch(/\\[*+|-]/);
  });
});

describe('escapes (report finding 13)', () => {
  it('identifiers in prose keep their underscores', async () => {
    const { content } = await get('docs-rtd.html');
    expect(content).toMatch(/[^`]pg_stat_activity/);
    expect(content).not.toContain('\\_');
  });
});

describe('heading anchors (report finding 8)', () => {
  it('MediaWiki section headings survive and no [edit] leaks', async () => {
    const { content } = await get('wiki.html');
    for (const h of ['Definitions', 'Zeros', 'Applications', 'References']) expect(content).toMatch(new RegExp(`^## ${h}$`, 'm'));
    expect(content).not.toMatch(/action=edit|\[edit\]/);
  });

  it('no permalink anchors leak next to headings (Sphinx ¶, Docusaurus, GitHub)', async () => {
    for (const page of ['docs-rtd.html', 'docs-docusaurus.html', 'github-readme.html']) {
      const { content } = await get(page);
      expect(content, page).not.toMatch(/\[[\s\u200b¶#]*\]\(#/);
    }
  });
});

describe('math (report finding 15)', () => {
  it('KaTeX is its TeX, inline and display', async () => {
    const { content } = await get('katex-blog.html');
    expect(content).toContain('$\\sigma_i = \\frac{e^{z_i}}{\\sum_j e^{z_j}}$');
    expect(content).toContain('$$\\log \\sum_j e^{z_j} = m + \\log \\sum_j e^{z_j - m}$$');
    expect(content).not.toContain('∑');
  });

  it('MediaWiki math is its TeX, not an image link', async () => {
    const { content } = await get('wiki.html');
    expect(content).toContain('$y(x)$');
    expect(content).not.toContain('{\\displaystyle');
  });
});

describe('legacy encodings (report finding 10)', () => {
  it('unlabelled HTML that is not UTF-8 is read as windows-1252', async () => {
    const page = await get('legacy-1252.html');
    expect(page.title).toBe('Café history of the Rue Mouffetard');
    expect(page.content).not.toContain('\uFFFD');
  });

  it('unlabelled Shift_JIS and EUC-JP pages are read as such (a detector, not windows-1252)', async () => {
    const sjis = await get('legacy-shift_jis.html');
    expect(sjis.title).toBe('令和六年度 ごみ収集日程の変更について');
    expect(sjis.content).toContain('燃えるごみの収集日が火曜日と金曜日に変わります');
    const euc = await get('legacy-euc-jp.html');
    expect(euc.title).toBe('夏の臨時列車運転のお知らせ');
    expect(euc.content).toContain('土曜日と日曜日に臨時列車を一往復運転します');
    for (const page of [sjis, euc]) expect(page.content).not.toMatch(/[\uFFFD\u0080-\u00ff]/);
  });

  it('unlabelled KOI8-R and windows-1253 pages are read as such (a detector and the letters, not windows-1252)', async () => {
    const ru = await get('legacy-koi8-r.html');
    expect(ru.title).toBe('Новости города: ремонт набережной начнётся весной');
    expect(ru.content).toContain('Городской совет на вчерашнем заседании утвердил план ремонта набережной');
    const el = await get('legacy-windows-1253.html');
    expect(el.title).toBe('Ανακοίνωση: αλλαγές στα δρομολόγια των λεωφορείων');
    expect(el.content).toContain('Άνοιξη 2005 – Από τη Δευτέρα 4 Απριλίου η γραμμή 14');
    // No replacement characters, and none of the Latin-1 letters that windows-1252 makes of them.
    for (const page of [ru, el]) expect(page.content).not.toMatch(/[\uFFFD\u00c0-\u00ff]/);
  });

  it('unlabelled text', async () => {
    const { content } = await get('plain-1252.txt');
    expect(content).toContain('Crème brûlée');
    expect(content).toContain('£18.00');
  });

  it("an XML feed's <?xml encoding?>", async () => {
    const { content } = await get('feed-latin1.xml');
    expect(content).toContain('Café Société');
  });
});

describe('task lists', () => {
  it('a checkbox opening a list item is a GFM task, checked or not (GitHub, GitLab, a <label> around it)', async () => {
    const { content: readme } = await get('github-readme.html');
    expect(readme).toMatch(/^-\s+\[x\] Retries with jitter$/m);
    expect(readme).toMatch(/^-\s+\[ \] Priorities$/m);
    const { content } = await get('task-lists.html');
    expect(content).toMatch(/^-\s+\[x\] Freeze the public API surface$/m);
    expect(content).toMatch(/^-\s+\[ \] Write the 3\.x to 4\.0 migration guide$/m);
    expect(content).toMatch(/^-\s+\[x\] Run the soak test for 72 hours on staging$/m);
    expect(content).toMatch(/^-\s+\[x\] Docs site redirects tested$/m);
    expect(content).toMatch(/^-\s+\[ \] Changelog entries for every merged request since 3\.9$/m);
    // A form's checkbox is not a task.
    expect(content).not.toContain('Notify me');
  });
});

describe('whole-page fallback (report finding 17)', () => {
  it('drops the consent banner', async () => {
    const page = await get('spa-shell-with-chrome.html');
    expect(page.content).not.toContain('We use cookies');
  });

  it("keeps a login wall's own message (a guard: the wall is what the model must be told)", async () => {
    const page = await get('login-wall.html');
    expect(page.content).toContain('You need to be a member of the Acme workspace');
  });
});

describe('title (report finding 18)', () => {
  it("og:title when the <title> is it plus the site's name", async () => {
    expect((await get('news-article.html')).title).toBe('Harbour city votes to close coal terminal by 2030');
    expect((await get('wiki.html')).title).toBe('Bessel function - Wikipedia');
  });
});
