import { seededRandom } from '@drael/test-support';
import { describe, expect, it } from 'vitest';
import { HtmlExtractor } from './html-extractor.js';
import { joinLines } from './markdown-rules.js';

// The edge cases of markdown-rules.ts, through the extractor as the service runs it. The page
// shapes themselves (RTD, Docusaurus, MDN, GitHub, MediaWiki, KaTeX) are in
// test/markdown-structure.spec.ts.
const extractor = new HtmlExtractor();
const prose = '<p>A paragraph with enough words in it for Readability to take this article as the content of the page it is on.</p>'.repeat(4);
const markdownOf = (inner: string) =>
  extractor.extract(`<!doctype html><html><head><title>T</title></head><body><article>${prose}${inner}${prose}</article></body></html>`, 'https://site.example/a').markdown;

describe('tables', () => {
  it('a table without a header row gets an empty one; a short row is padded', () => {
    const md = markdownOf('<table><tr><td>Bowline</td><td>A fixed loop</td><td>Easy</td></tr><tr><td>Hitch</td><td>To a post</td></tr></table>');
    expect(md).toContain('|  |  |  |\n| --- | --- | --- |\n| Bowline | A fixed loop | Easy |\n| Hitch | To a post |  |');
  });

  it('line breaks in a cell stay in its row, pipes are escaped, colspan keeps the columns', () => {
    const md = markdownOf(
      '<table><thead><tr><th>Flag</th><th>Meaning</th><th>Since</th></tr></thead><tbody>' +
        '<tr><td><code>a|b</code></td><td><p>First line.</p><p>Second line.</p></td><td>1.0</td></tr>' +
        '<tr><td colspan="2">Both columns</td><td>2.0</td></tr></tbody></table>',
    );
    expect(md).toContain('| Flag | Meaning | Since |\n| --- | --- | --- |\n| `a\\|b` | First line.<br>Second line. | 1.0 |\n| Both columns | | 2.0 |');
  });

  it('a caption is a paragraph above the table', () => {
    const md = markdownOf('<table><caption>Zeros</caption><tr><th>k</th><th>J0</th></tr><tr><td>1</td><td>2.4048</td></tr></table>');
    expect(md).toContain('Zeros\n\n| k | J0 |\n| --- | --- |\n| 1 | 2.4048 |');
  });

  it('layout tables stay blocks: one column, nested tables, code inside', () => {
    const oneColumn = markdownOf('<table><tr><td>First block of the layout.</td></tr><tr><td>Second block of the layout.</td></tr></table>');
    expect(oneColumn).toContain('First block of the layout.\n\nSecond block of the layout.');
    expect(oneColumn).not.toContain('|');
    const nested = markdownOf(
      '<table><tr><td>Menu</td><td><table><tr><th>Part</th><th>Price</th></tr><tr><td>Gear</td><td>4.50</td></tr></table></td></tr><tr><td>Left</td><td>Right</td></tr></table>',
    );
    expect(nested).toContain('| Part | Price |\n| --- | --- |\n| Gear | 4.50 |');
    expect(nested).not.toMatch(/\| Menu/);
  });

  it('a record (th + td or td + td rows, no header) is label: value lines; with a header it is a grid', () => {
    const md = markdownOf(
      '<table><tr><th colspan="2">Cordless drill</th></tr><tr><th>Weight:</th><td>1.45 kg</td></tr><tr><th>Warranty</th><td>3 years<br>parts only</td></tr></table>',
    );
    expect(md).toContain('Cordless drill\nWeight: 1.45 kg\nWarranty: 3 years; parts only');
    const sheet = markdownOf('<table><tr><td>Upper</td><td>Suede</td></tr><tr><td>Sole</td><td>Rubber</td></tr></table>');
    expect(sheet).toContain('Upper: Suede\nSole: Rubber');
    const grid = markdownOf('<table><tr><th>Option</th><th>Meaning</th></tr><tr><td>a</td><td>b</td></tr><tr><th>c</th><td>d</td></tr></table>');
    expect(grid).toContain('| Option | Meaning |\n| --- | --- |\n| a | b |\n| c | d |');
  });
});

describe('code blocks', () => {
  it('the fence is longer than any backtick run inside; no escapes; language from data-lang', () => {
    const md = markdownOf('<pre data-lang="markdown">Use ```js fences, *not* _this_ [x]\n\\ back</pre>');
    expect(md).toContain('````markdown\nUse ```js fences, *not* _this_ [x]\n\\ back\n````');
  });

  it("the language where each highlighter writes it: a wrapper's language-x, <pre lang>, a marker class beside the name", () => {
    const md = markdownOf(
      // Jekyll/Rouge: div.language-ruby.highlighter-rouge > div.highlight > pre.highlight > code
      '<div class="language-ruby highlighter-rouge"><div class="highlight"><pre class="highlight"><code>puts 1</code></pre></div></div>' +
        // GitLab (language-plaintext for a language its highlighter lacks) and GitHub's older markdown: <pre lang="toml">
        '<pre class="code highlight language-plaintext" lang="toml"><code>a = 1</code></pre>' +
        // Pandoc: pre.sourceCode.haskell; highlight.js before v11: code.hljs.javascript
        '<div class="sourceCode"><pre class="sourceCode haskell"><code class="sourceCode haskell">main = print 1</code></pre></div>' +
        '<pre><code class="hljs javascript">let b = 2</code></pre>' +
        // data-lang two levels up (a code widget around a scroll wrapper)
        '<div class="code-block" data-language="yaml"><div class="wrap"><pre><code>k: v</code></pre></div></div>' +
        // a natural language in lang= is not a code language; nor is a marker class alone
        '<pre lang="en">plain words</pre><pre><code class="hljs">just code</code></pre>',
    );
    expect(md).toContain('```ruby\nputs 1\n```');
    expect(md).toContain('```toml\na = 1\n```');
    expect(md).toContain('```haskell\nmain = print 1\n```');
    expect(md).toContain('```javascript\nlet b = 2\n```');
    expect(md).toContain('```yaml\nk: v\n```');
    expect(md).toContain('```\nplain words\n```');
    expect(md).toContain('```\njust code\n```');
  });

  it('line numbers and copy buttons are not code: Pygments tables, Chroma spans, data-line-number', () => {
    const md = markdownOf(
      '<table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td>' +
        '<td class="code"><div class="highlight"><pre><span></span>a = 1\nb = 2\n</pre></div></td></tr></table>' +
        '<pre class="chroma"><code class="language-go"><span class="line"><span class="ln">1</span>x := 1\n</span><span class="line"><span class="ln">2</span>y := 2</span></code></pre>' +
        '<pre><span data-line-number="7"></span>z = 3<button>Copy</button><span class="copy-code">Copied!</span><clipboard-copy>Copy</clipboard-copy></pre>',
    );
    expect(md).toContain('```\na = 1\nb = 2\n```');
    expect(md).toContain('```go\nx := 1\ny := 2\n```');
    expect(md).toContain('```\nz = 3\n```');
    expect(md).not.toMatch(/Cop(y|ied)/);
  });

  it('a code table without <pre> (GitHub gists, blob views) is fenced, indentation kept, numbers out', () => {
    const md = markdownOf(
      '<div class="blob-wrapper data type-python"><table class="highlight js-file-line-container">' +
        '<tr><td id="L1" class="blob-num js-line-number" data-line-number="1"></td><td id="LC1" class="blob-code blob-code-inner"><span class="pl-k">def</span> <span class="pl-en">f</span>(x):</td></tr>' +
        '<tr><td id="L2" class="blob-num js-line-number" data-line-number="2"></td><td id="LC2" class="blob-code blob-code-inner">    <span class="pl-k">return</span> x_1 * 2</td></tr></table></div>',
    );
    expect(md).toContain('```python\ndef f(x):\n    return x_1 * 2\n```');
  });

  it('one line per <br> and per block inside <pre>', () => {
    const md = markdownOf(
      '<pre class="language-bash"><span class="token-line">npm i<br></span><span class="token-line">npm t<br></span></pre><pre><div>one</div><div>two</div></pre>',
    );
    expect(md).toContain('```bash\nnpm i\nnpm t\n```');
    expect(md).toContain('```\none\ntwo\n```');
  });
});

describe('escapes', () => {
  it('no backslash inside identifiers or inline code; emphasis-capable marks still escaped', () => {
    const md = markdownOf('<p>Set checkpoint_completion_target and __init__ with <code>a_b*c</code>, not *this*.</p>');
    expect(md).toContain('Set checkpoint_completion_target and \\_\\_init\\_\\_ with `a_b*c`, not \\*this\\*.');
  });

  it('"1." is escaped at the start of a paragraph, not in a heading', () => {
    const md = markdownOf('<h2>1. Replication, part 1</h2><p>1. Not a list item.</p>');
    expect(md).toContain('## 1. Replication, part 1');
    expect(md).toContain('1\\. Not a list item.');
  });
});

describe('math', () => {
  it('MathJax and bare MathML with alttext', () => {
    const md = markdownOf(
      '<p>Energy <mjx-container class="MathJax" jax="CHTML"><mjx-math>E=mc2</mjx-math><mjx-assistive-mml><math alttext="E = mc^2"><mi>E</mi></math></mjx-assistive-mml></mjx-container> here.</p>' +
        '<p>Also <math alttext="a_1 + b" display="block"><mi>a</mi></math></p>',
    );
    expect(md).toContain('Energy $E = mc^2$ here.');
    expect(md).toContain('$$a_1 + b$$');
  });
});

describe('links', () => {
  it('a link with nothing to read (an avatar whose image has no alt, an icon link) is left out, not written as [](…)', () => {
    const md = markdownOf(
      '<p><a href="https://site.example/u/nkowal"><img src="/avatar.png" alt=""></a> <a href="/share"><svg viewBox="0 0 16 16"></svg></a><a href="/rss"> </a>Posted in <a href="/t/news">news</a>.</p>',
    );
    expect(md).toContain('Posted in [news](https://site.example/t/news).');
    expect(md).not.toMatch(/\[\s*\]\(/);
  });

  it('a link around an image with alt text stays', () => {
    const md = markdownOf('<p><a href="/big.jpg"><img src="/small.jpg" alt="The harbour at dawn"></a></p>');
    expect(md).toContain('[![The harbour at dawn](https://site.example/small.jpg)](https://site.example/big.jpg)');
  });
});

describe('admonitions', () => {
  it("a docs site's callout (Docusaurus, MkDocs/Sphinx, a Bootstrap alert) is a quote under its label, not a stray word above a paragraph", () => {
    const md = markdownOf(
      '<div class="theme-admonition theme-admonition-warning admonition_xJq3 alert alert--warning"><div class="admonitionHeading_Gvgb"><span class="admonitionIcon_Rf37"><svg viewBox="0 0 16 16"></svg></span>warning</div><div class="admonitionContent_BuS1"><p>Settings in <code>package.json</code> are ignored since version 3.</p><p>Move them to the config file.</p></div></div>' +
        '<div class="admonition note"><p class="admonition-title">Note</p><p>MkDocs and Sphinx notes look like this.</p></div>' +
        '<div class="alert alert-info" role="alert"><h4 class="alert-heading">Heads up</h4><p>The API is rate limited to 60 requests a minute.</p></div>',
    );
    expect(md).toContain('> **Warning**\n>\n> Settings in `package.json` are ignored since version 3.\n>\n> Move them to the config file.');
    expect(md).toContain('> **Note**\n>\n> MkDocs and Sphinx notes look like this.');
    expect(md).toContain('> **Heads up**\n>\n> The API is rate limited to 60 requests a minute.');
  });

  it('a box named alert without a label of its own is left as it is', () => {
    const md = markdownOf('<div class="alert alert-success">Your changes were saved and will appear on the site within a minute.</div>');
    expect(md).toContain('Your changes were saved');
    expect(md).not.toContain('> ');
  });
});

describe('footnotes', () => {
  it('a reference mark is [1] as the page shows it, not a link to #cite_note-1; the back-links of the notes go', () => {
    const md = markdownOf(
      '<p>Bessel functions are solutions of a linear equation.<sup id="cite_ref-1" class="reference"><a href="#cite_note-1">[1]</a></sup> They matter in wave problems.<sup class="footnote-ref"><a href="#fn2" id="fnref2">2</a></sup></p>' +
        '<ol class="references"><li id="cite_note-1"><span class="mw-cite-backlink"><b><a href="#cite_ref-1">^</a></b></span> <span class="reference-text">Watson, G. N. (1944). A Treatise on the Theory of Bessel Functions.</span></li>' +
        '<li id="fn2"><p>Abramowitz and Stegun, chapter 9. <a href="#fnref2" class="footnote-backref">↩︎</a></p></li></ol>',
    );
    expect(md).toContain('solutions of a linear equation.[1] They matter in wave problems.[2]');
    expect(md).toMatch(/1\. +Watson, G\. N\. \(1944\)/);
    expect(md).toMatch(/2\. +Abramowitz and Stegun, chapter 9\. *$/m);
    expect(md).not.toMatch(/cite_note|cite_ref|#fn|\^\]|↩/);
  });
});

describe('joinLines', () => {
  // The pattern it replaced: its answers are the rule.
  const byPattern = (text: string, by: string) => text.replace(/\s*\n+\s*/g, by);
  const PIECES = [' ', '\t', '\n', '\r', '\u00a0', '\u2028', 'a', 'bc', '\n\n', ' \n '];

  it('answers what the pattern answers, on 20,000 texts of white space, line breaks and words', () => {
    const next = seededRandom(7);
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = Math.floor(next() * 30);
      for (let k = 0; k < length; k++) text += PIECES[Math.floor(next() * PIECES.length)];
      expect(joinLines(text, '<br>'), JSON.stringify(text)).toBe(byPattern(text, '<br>'));
    }
  });

  // The pattern searched again from every character of a run of white space without a line
  // break: these 300,000 spaces took it minutes.
  it('a long run of white space without a line break costs one pass', () => {
    const text = `a${' '.repeat(300_000)}b\n c`;
    expect(joinLines(text, ' ')).toBe(`a${' '.repeat(300_000)}b c`);
  });
});
