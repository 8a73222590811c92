// bench/fetch: markdown structure checks beside the corpus's token scores, which cannot see a
// flattened table, an unfenced code block or a backslash inside an identifier (extraction report
// 2026-12-03, last paragraph). Pages: apps/fetch/test/fixtures/structure (the report's page
// shapes, UTF-8 HTML ones only: the extractor is run directly, as after decoding). Each check is
// a regular expression the markdown must match (or, with `not`, must not).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('../../apps/fetch/test/fixtures/structure/', import.meta.url));

export const STRUCTURE_CHECKS = {
  'docs-rtd.html': [
    ['table: GFM with header', /^\| Option \| Default \| Meaning \|\n\| --- \| --- \| --- \|$/m],
    ['code: python fenced with language', /```python\nimport asyncio\n/],
    ['code: no line numbers', /```[a-z]*\nimport asyncio\nfrom pgwire import Pool\n/],
    ['code: no escapes inside', /min_size=2, max_size=10/],
    ['code: console block fenced', /```console\n\$ psql/],
    ['escape: identifier in prose', /[^`]pg_stat_activity/],
    ['anchors: no ¶ link', /\[¶\]\(#/, 'not'],
    ['admonition: a quote under its label', /^> \*\*Note\*\*\n>\n> Pools are per process\./m],
  ],
  'docs-docusaurus.html': [
    ['code: one command per line', /npm install --global @flarekit\/cli\nflarekit --version/],
    ['code: bash language', /```bash\n/],
    ['code: ts lines kept', /export default defineConfig\(\{\n {2}region: 'eu-west',/],
    ['anchors: no hash-link', /\[[\u200b\s]*\]\(#/, 'not'],
    ['admonition: a quote under its label', /^> \*\*Warning\*\*\n>\n> Do not install the CLI with `sudo`/m],
  ],
  'docs-mdn.html': [['code: js language (brush)', /```js\nconst arr1 = \[1, 2, 1\];/]],
  'github-readme.html': [
    ['code: rust language (highlight-source)', /```rust\nuse ripq::\{Queue, Job\};/],
    ['code: no escapes inside', /fn main\(\) -> ripq::Result<\(\)>/],
    ['table: feature flags', /^\| `tokio` \| off \|/m],
    ['anchors: no empty anchor link', /\[\]\(#/, 'not'],
  ],
  'wiki.html': [
    ['table: zeros', /^\| 1 \| 2\.4048 \| 3\.8317 \|/m],
    ['table: infobox label with value', /^Named after: \[?Friedrich Bessel/m],
    ['math: inline TeX', /\$y\(x\)\$/],
    ['headings: MediaWiki h2 kept', /^## Zeros$/m],
    ['anchors: no [edit]', /action=edit/, 'not'],
    ['footnotes: the mark as the page shows it', /order of the Bessel function\.\[1\] They/],
    ['footnotes: no back-links', /\(#cite_ref-\d+\)/, 'not'],
  ],
  'katex-blog.html': [
    ['math: KaTeX inline TeX', /\$\\sigma_i = \\frac\{e\^\{z_i\}\}\{\\sum_j e\^\{z_j\}\}\$/],
    ['math: KaTeX display TeX', /\$\$\\log \\sum_j e\^\{z_j\} = m \+ \\log \\sum_j e\^\{z_j - m\}\$\$/],
  ],
  'pre-ascii.html': [
    ['code: plain <pre> fenced', /```\n\+-----------\+/],
    ['code: tree lines kept', /├── producer\.go\n├── consumer\.go/],
    ['escape: none in the ASCII table', /\\[*+|-]/, 'not'],
  ],
  'structure.html': [['table: knots', /^\| Bowline \| A fixed loop/m]],
  'blog-code-labels.html': [
    ['code: ruby from a language-x wrapper (Jekyll/Rouge)', /```ruby\nputs "hello from rouge"\n```/],
    ['code: haskell beside sourceCode (Pandoc)', /```haskell\nmain :: IO \(\)\n/],
    ['code: toml from <pre lang> (GitLab)', /```toml\n\[server\]\nport = 8080\n```/],
    ['code: javascript beside hljs (highlight.js 9)', /```javascript\nconst greeting = 'hello from hljs';\n```/],
    ['code: a human language in lang= is no code language', /```\nThis block is just text in English\.\n```/],
  ],
  'task-lists.html': [
    ['task list: checked item', /^-\s+\[x\] Freeze the public API surface$/m],
    ['task list: open item', /^-\s+\[ \] Write the 3\.x to 4\.0 migration guide$/m],
    ['task list: box inside a <label>', /^-\s+\[x\] Docs site redirects tested$/m],
  ],
};

export function loadStructurePages() {
  return Object.entries(STRUCTURE_CHECKS).map(([name, checks]) => ({ name, html: readFileSync(`${DIR}${name}`, 'utf8'), checks }));
}

/** The checks an extractor passes: {passed, total, failed: ['page: label', ...]}. */
export function scoreStructure(extractor, pages = loadStructurePages()) {
  let passed = 0;
  let total = 0;
  const failed = [];
  for (const page of pages) {
    const { markdown } = extractor.extract(page.html, `https://structure.example/${page.name}`);
    for (const [label, re, not] of page.checks) {
      total++;
      if (re.test(markdown) !== (not === 'not')) passed++;
      else failed.push(`${page.name}: ${label}`);
    }
  }
  return { passed, total, failed };
}
