import type TurndownService from 'turndown';

/**
 * Drael's turndown rules for the structure a model needs to read a page: tables, code, math, and
 * an escape that leaves identifiers alone (extraction report 2026-12-03, findings 1, 2, 13, 15;
 * test/markdown-structure.spec.ts). One definition of each rule, added by addMarkdownRules.
 */
export function addMarkdownRules(service: TurndownService): void {
  addTableRules(service);
  addCodeRules(service);
  addMathRules(service);
  addTaskListRules(service);
  // A <details> summary is the heading of what it opens: its own line, bold, not run into the text.
  service.addRule('details-summary', {
    filter: 'summary',
    replacement: (content) => (content.trim() ? `\n\n**${content.trim()}**\n\n` : ''),
  });
  // A link with nothing to read (an avatar whose image has no alt, an icon, a blank) came out as
  // "[](https://…)" before a post or a name: only its target, which a reader cannot use.
  service.addRule('empty-link', {
    filter: (node) => node.nodeName === 'A' && !(node.textContent ?? '').trim() && !Array.from(node.getElementsByTagName('img')).some((img) => img.getAttribute('alt')?.trim()),
    replacement: () => '',
  });
  // Footnotes: a reference mark links to its note on the same page ("[\[1\]](#cite_note-1)"), a
  // note back to its mark ("[^](#cite_ref-1)", "↩︎"); out of the page neither link leads anywhere.
  // The mark is written as the page shows it, in brackets; the back-link goes.
  service.addRule('footnote-link', {
    filter: (node) => node.nodeName === 'A' && (node.getAttribute('href') ?? '').startsWith('#') && FOOTNOTE_LINK.test((node.textContent ?? '').trim()),
    replacement: (_content, node) => {
      const mark = (node.textContent ?? '').trim();
      return BACK_LINK.test(mark) ? '' : `[${mark.replace(/^\[|\]$/g, '')}]`;
    },
  });
  // Headings: a leading "1." is not a list item after "#" (the escape cannot see that it is
  // in a heading: it gets the text alone).
  service.addRule('heading', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    replacement: (content, node) => {
      const level = Number(node.nodeName.charAt(1));
      const text = unescapeOrderedMarker(joinLines(content, ' ').trim());
      return text ? `\n\n${'#'.repeat(level)} ${text}\n\n` : '';
    },
  });
  // After the heading rule: turndown tries the rules added last first (an admonition's label may be a heading).
  addAdmonitionRules(service);
}

// ---------------------------------------------------------------------------------------------
// Escaping (finding 13)

// turndown 7.2's escapes, but "_" only where it could open or close emphasis: CommonMark never
// reads an underscore between two letters or digits as emphasis, and escaping it put backslashes
// into every config key, function and file name a model then quoted back (pg\_stat\_activity).
// Its "N. " escape stays: the text node may start a line; headings and table cells, where it
// cannot be a list, take it out again (unescapeOrderedMarker).
const ESCAPES: [RegExp, string | ((match: string) => string)][] = [
  [/\\/g, '\\\\'],
  [/\*/g, '\\*'],
  [/^-/g, '\\-'],
  [/^\+ /g, '\\+ '],
  [/^(=+)/g, '\\$1'],
  [/^(#{1,6}) /g, '\\$1 '],
  [/`/g, '\\`'],
  [/^~~~/g, '\\~~~'],
  [/\[/g, '\\['],
  [/\]/g, '\\]'],
  [/^>/g, '\\>'],
  [/(?<![\p{L}\p{N}_])_+|_+(?![\p{L}\p{N}_])/gu, (run) => run.replace(/_/g, '\\_')],
  [/^(\d+)\. /g, '$1\\. '],
];
// What the escapes can match: these characters anywhere, or these forms at the very start of
// the text (no m flag, so ^ is the start of the text node). Text holding none is returned as is
// (bench/fetch profile: most text nodes, and 13 expressions over each was ~4 % of extraction).
const MARKDOWN_SPECIAL = /[\\*`[\]_]/;
const MARKDOWN_SPECIAL_START = /^(?:[-=>]|\+ |#{1,6} |~~~|\d+\. )/;

export function escapeMarkdown(text: string): string {
  if (!MARKDOWN_SPECIAL.test(text) && !MARKDOWN_SPECIAL_START.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of ESCAPES) out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement);
  return out;
}

const unescapeOrderedMarker = (text: string) => text.replace(/^(\d+)\\\. /, '$1. ');

// ---------------------------------------------------------------------------------------------
// Tables (finding 1)
//
// Hand-written, not @joplin/turndown-plugin-gfm (the maintained fork, checked at 1.0.68): it
// reads HTMLTableElement.rows, which linkedom does not implement, so every table would be
// skipped; and it keeps a table holding a list or a heading as raw HTML, which is noise to a model.
//
// Three kinds:
// - grid: a GFM table. A table without a header row gets an empty one (GFM needs one; promoting
//   the first data row would mislabel it). Line breaks in a cell become <br> and pipes \|, so a
//   row stays one line.
// - record: two columns, every row a label and a td value (th+td or td+td: an infobox, a spec
//   sheet), optionally with one-cell rows (the box's title, an image), and no header row of two
//   th (that is a grid: "Option | Meaning"). "Label: value" lines: it is a record, not a grid; as
//   a GFM table it would need an empty header row, and each line keeps its label however the
//   content is cut or focused.
// - layout: a nested table, a cell holding a block a GFM cell cannot (code, headings, rules,
//   quotes), a single column, a single row, or role=presentation. Cells stay blocks, in order.

type TableKind = 'grid' | 'record' | 'layout';
interface TableShape {
  kind: TableKind;
  columns: number;
  /** The row given the |---| line after it (a thead row, or a first row of th only); null: none. */
  headerRow: Element | null;
}

const LAYOUT_BLOCKS = new Set(['table', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'blockquote']);
const shapes = new WeakMap<Element, TableShape>();

function rowsOf(table: Element): Element[] {
  const rows: Element[] = [];
  for (const child of Array.from(table.children)) {
    if (child.localName === 'tr') rows.push(child);
    else if (child.localName === 'thead' || child.localName === 'tbody' || child.localName === 'tfoot') {
      for (const row of Array.from(child.children)) if (row.localName === 'tr') rows.push(row);
    }
  }
  return rows;
}

const cellsOf = (row: Element) => Array.from(row.children).filter((c) => c.localName === 'td' || c.localName === 'th');
const span = (cell: Element) => Math.max(1, Math.min(50, Number(cell.getAttribute('colspan')) || 1));

function holdsLayoutBlock(el: Element): boolean {
  for (const child of Array.from(el.children)) if (LAYOUT_BLOCKS.has(child.localName) || holdsLayoutBlock(child)) return true;
  return false;
}

function shapeOf(table: Element): TableShape {
  let shape = shapes.get(table);
  if (shape) return shape;
  const rows = rowsOf(table);
  const cells = rows.map(cellsOf);
  const columns = Math.max(0, ...cells.map((cs) => cs.reduce((n, c) => n + span(c), 0)));
  const role = table.getAttribute('role');
  let kind: TableKind;
  if (role === 'presentation' || role === 'none' || rows.length < 2 || columns < 2 || holdsLayoutBlock(table)) kind = 'layout';
  else if (columns === 2 && cells.every((cs) => cs.length === 1 || (cs.length === 2 && cs[1]!.localName === 'td')) && cells.some((cs) => cs.length === 2)) kind = 'record';
  else kind = 'grid';
  const first = rows[0];
  const headerRow = kind === 'grid' && first && (first.parentElement?.localName === 'thead' || cells[0]!.every((c) => c.localName === 'th')) ? first : null;
  shape = { kind, columns, headerRow };
  shapes.set(table, shape);
  return shape;
}

function tableOf(node: Node): Element | null {
  for (let el = node.parentElement; el; el = el.parentElement) if (el.localName === 'table') return el;
  return null;
}

/**
 * Each run of white space that holds a line break made `by` (a heading's text on one line, a
 * cell's lines as `<br>`): what replacing every match of `\s*\n+\s*` did, in one pass. That
 * pattern tried again from every character of a long run of white space without a line break, a
 * cost that grew with the square of the run; this one starts only where a run starts.
 */
export function joinLines(text: string, by: string): string {
  return text.replace(LINE_BREAK_RUN, by);
}
const LINE_BREAK_RUN = /(?<![^\S\n])[^\S\n]*\n\s*/g;

/** A cell's markdown on one line: GFM ends the row at a line break and the cell at a pipe. */
const gridCell = (content: string) => joinLines(unescapeOrderedMarker(content.trim()), '<br>').replace(/\|/g, '\\|');
const block = (content: string) => `\n\n${content}\n\n`;

function addTableRules(service: TurndownService): void {
  service.addRule('table-cell', {
    filter: ['td', 'th'],
    replacement: (content, node) => {
      const table = tableOf(node);
      const shape = table ? shapeOf(table) : null;
      if (!shape || shape.kind === 'layout') return block(content);
      if (shape.kind === 'record') {
        const text = joinLines(content.trim(), '; ');
        // The label's own colon, if it has one, is the separator.
        return !node.previousElementSibling && node.nextElementSibling ? `${text.replace(/:$/, '')}: ` : text;
      }
      const cell = ` ${gridCell(content)} |`;
      return (node.previousElementSibling ? '' : '|') + cell + ' |'.repeat(span(node) - 1);
    },
  });
  service.addRule('table-row', {
    filter: 'tr',
    replacement: (content, node) => {
      const table = tableOf(node);
      const shape = table ? shapeOf(table) : null;
      if (!shape || shape.kind === 'layout') return block(content);
      if (shape.kind === 'record') return `\n${content.trim()}\n`;
      const missing = shape.columns - cellsOf(node).reduce((n, c) => n + span(c), 0);
      const row = `${content || '|'}${'  |'.repeat(Math.max(0, missing))}`;
      return `\n${row}${node === shape.headerRow ? `\n|${' --- |'.repeat(shape.columns)}` : ''}`;
    },
  });
  service.addRule('table-section', {
    filter: ['thead', 'tbody', 'tfoot'],
    replacement: (content) => content,
  });
  service.addRule('table-caption', {
    filter: 'caption',
    // Its own paragraph, above the table (rows follow it in the table's content).
    replacement: (content) => block(content.trim()),
  });
  service.addRule('table', {
    filter: 'table',
    replacement: (content, node) => {
      const shape = shapeOf(node);
      if (shape.kind !== 'grid' || shape.headerRow) return block(content.trim());
      // Caption paragraph (if any) first, then the empty header GFM requires, then the rows.
      const at = content.search(/\n\|/);
      const caption = at > 0 ? content.slice(0, at).trim() : '';
      const rows = at >= 0 ? content.slice(at).trim() : content.trim();
      const header = `|${'  |'.repeat(shape.columns)}\n|${' --- |'.repeat(shape.columns)}`;
      return block(`${caption ? `${caption}\n\n` : ''}${header}\n${rows}`);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Code (finding 2)
//
// One rule for every <pre>: turndown's own fences only a <pre> whose first child is <code>,
// reads it with textContent (so a highlighter's <br> line ends vanish and its line-number
// elements are glued to the code), and takes the language from <code> alone.

// Line-number elements of the common highlighters: Pygments (linenos, lineno), Prism
// (line-numbers-rows), Docusaurus (codeLineNumber_*), GitHub blob views (blob-num), highlight.js
// and Hexo (gutter), Chroma (ln, lnt).
const LINE_NUMBER_CLASS = /(?:^|\s)(?:linenos?|lineno|linenodiv|line-?numbers?(?:-rows)?|codeLineNumber\w*|blob-num|gutter|lnt?)(?:\s|$)/i;
// Copy-to-clipboard controls (turndown drops <button> by itself, not these).
const COPY_CONTROL_CLASS = /(?:^|[\s_-])(?:copy|clipboard)(?:[\s_-]|$)/i;
const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/;
const BRUSH_CLASS = /(?:^|\s|;)brush:\s*([\w+#.-]+)/;
const HIGHLIGHT_CLASS = /(?:^|\s)highlight-(?:source-|text-)?([\w+#.-]+)/;
// Sphinx writes highlight-default / highlight-none for "no particular language".
const NO_LANGUAGE = new Set(['default', 'none', 'plaintext', 'nohighlight']);
// Highlighters that mark a block with their own class and name the language with a bare class
// beside it: Pandoc (pre.sourceCode.haskell), highlight.js before v11 (code.hljs.javascript).
const HIGHLIGHTER_MARKER = new Set(['sourcecode', 'hljs']);
// Classes beside such a marker that are not a language (Pandoc's numbered lines, MDN's notranslate).
const NOT_A_LANGUAGE_CLASS = /^(?:hljs(?:-.*)?|sourcecode|numberlines|number-lines|line-numbers|notranslate|code|highlight|wrap)$/;
// The natural languages CLDR knows, for telling <pre lang="toml"> (GitLab, GitHub's older
// markdown) from <pre lang="en"> (HTML's own attribute: the text's human language). Perl's "pl"
// and OCaml's "ml" read as Polish and Malayalam and are lost; those pages name them by class too.
const naturalLanguages = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

const isLineNumber = (el: Element) => el.hasAttribute('data-line-number') || LINE_NUMBER_CLASS.test(el.getAttribute('class') ?? '');

/** The code as written: <br> is a line end, a block child ends its line, line numbers and copy controls are not code. */
function codeText(el: Element): string {
  let out = '';
  for (let n = el.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 3 || n.nodeType === 4) out += (n as Text).data;
    else if (n.nodeType === 1) {
      const child = n as Element;
      const name = child.localName;
      if (name === 'br') out += '\n';
      else if (name === 'button' || name === 'clipboard-copy' || isLineNumber(child) || COPY_CONTROL_CLASS.test(child.getAttribute('class') ?? '')) continue;
      else {
        out += codeText(child);
        if ((name === 'div' || name === 'p') && !out.endsWith('\n')) out += '\n';
      }
    }
  }
  return out;
}

function languageOf(pre: Element): string {
  const code = Array.from(pre.children).find((c) => c.localName === 'code') ?? null;
  const own = [code, pre].filter((e): e is Element => !!e);
  // A wrapper holds the label two levels up at most: Jekyll's div.language-ruby > div.highlight > pre,
  // Sphinx's div.highlight-python > div.highlight > pre, a widget's data-language around a scroller.
  const wrappers = [pre.parentElement, pre.parentElement?.parentElement].filter((e): e is HTMLElement => !!e);
  const cls = (e: Element) => e.getAttribute('class') ?? '';
  // Each source in turn, a "no particular language" (plaintext, Sphinx's default) passing on to
  // the next: GitLab writes language-plaintext with the author's lang="toml" beside it.
  const sources: (() => (string | null | undefined)[])[] = [
    () => own.map((e) => LANGUAGE_CLASS.exec(cls(e))?.[1]),
    () => own.map((e) => BRUSH_CLASS.exec(cls(e))?.[1]),
    () => own.map(markedLanguage),
    () => own.map(codeLanguageAttribute),
    () => wrappers.map((e) => (LANGUAGE_CLASS.exec(cls(e)) ?? HIGHLIGHT_CLASS.exec(cls(e)))?.[1]),
    () => [...own, ...wrappers].map((e) => e.getAttribute('data-lang') || e.getAttribute('data-language') || e.getAttribute('data-canonical-lang')),
  ];
  for (const source of sources) {
    const language = source()
      .map((l) => l?.toLowerCase())
      .find((l) => l && !NO_LANGUAGE.has(l));
    if (language) return language;
  }
  return '';
}

/** The bare language class beside a highlighter's marker class (Pandoc, highlight.js), when there is exactly one. */
function markedLanguage(el: Element): string | undefined {
  const tokens = (el.getAttribute('class') ?? '').split(/\s+/).filter(Boolean);
  if (!tokens.some((t) => HIGHLIGHTER_MARKER.has(t.toLowerCase()))) return undefined;
  const rest = tokens.filter((t) => !NOT_A_LANGUAGE_CLASS.test(t.toLowerCase()));
  return rest.length === 1 && /^[\w+#.-]+$/.test(rest[0]!) ? rest[0] : undefined;
}

/** `lang` on a <pre>/<code> when it names no human language CLDR knows: then it is the code's. */
function codeLanguageAttribute(el: Element): string | undefined {
  const lang = el.getAttribute('lang')?.trim();
  if (!lang || !/^[\w+#.-]+$/.test(lang)) return undefined;
  let natural: string | undefined;
  try {
    natural = naturalLanguages.of(lang);
  } catch {
    // Not a well-formed language tag (toml, rust, c): not a human language either.
  }
  return natural ? undefined : lang;
}

// The language of a code table, from its wrapper: GitHub's gists and blob views
// (div.blob-wrapper.type-python), or a highlight-source-* wrapper.
const CODE_TABLE_LANGUAGE = /(?:^|\s)(?:highlight-(?:source-|text-)?|type-)([\w+#.-]+)/;

/**
 * A code listing laid out as a table, one row per line, a number cell and a code cell, with no
 * <pre> (GitHub gists and blob views; CSS keeps its spaces): turned into the <pre> it is, before
 * turndown collapses the whitespace of every element outside a <pre> and the indentation is lost.
 * `table` is one of the tables of the part being converted.
 */
export function preformatCodeTable(table: Element): void {
  const rows = rowsOf(table);
  if (!rows.some((row) => cellsOf(row).some(isLineNumber)) || holdsLayoutBlock(table)) return;
  const lines = rows.map((row) =>
    cellsOf(row)
      .filter((cell) => !isLineNumber(cell))
      .map((cell) => codeText(cell))
      .join('\t'),
  );
  const pre = table.ownerDocument.createElement('pre');
  const language = [table, table.parentElement, table.parentElement?.parentElement]
    .map((e) => (e ? CODE_TABLE_LANGUAGE.exec(e.getAttribute('class') ?? '')?.[1] : undefined))
    .find(Boolean);
  if (language) pre.setAttribute('class', `language-${language}`);
  pre.textContent = lines.join('\n');
  table.replaceWith(pre);
}

function addCodeRules(service: TurndownService): void {
  service.addRule('code-block', {
    filter: 'pre',
    replacement: (_content, node) => {
      const code = codeText(node)
        .replace(/^(?:[ \t]*\n)+/, '')
        .trimEnd();
      if (!code) return '';
      // Longer than any run of backticks inside, so no line of the code can close it.
      const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${languageOf(node)}\n${code}\n${fence}\n\n`;
    },
  });
  // The number column of a code table (Pygments linenos="table", Hexo, GitHub blob views): not
  // content. Cells only: a div named "gutter" is as likely a page layout's spacing.
  service.addRule('line-numbers', {
    filter: (node) => node.localName === 'td' && isLineNumber(node),
    replacement: () => '',
  });
}

// ---------------------------------------------------------------------------------------------
// Math (finding 15)
//
// KaTeX and MathJax draw a formula twice (MathML for readers, spans for the eye), MediaWiki
// once as MathML and once as an image; turndown glued the copies together. The TeX the page
// was written in is what a model reads best: $…$ inline, $$…$$ on its own.

const MATH_CLASS = /(?:^|\s)(?:katex|mwe-math-element)(?:\s|$)/;

function texOf(el: Element): string | null {
  const annotation = el.localName === 'annotation' ? el : el.querySelector('annotation[encoding="application/x-tex"]');
  const math = el.localName === 'math' ? el : el.querySelector('math');
  const tex = annotation?.textContent ?? math?.getAttribute('alttext') ?? el.querySelector('img[alt]')?.getAttribute('alt') ?? null;
  if (tex === null) return null;
  // MediaWiki wraps every formula in {\displaystyle …}: taken off by position (a pattern for it
  // searched back through the formula once for every white space character after the command).
  const trimmed = tex.trim();
  const inner = trimmed.startsWith(DISPLAYSTYLE) && trimmed.endsWith('}') ? trimmed.slice(DISPLAYSTYLE.length, -1) : trimmed;
  return inner.trim() || null;
}

const DISPLAYSTYLE = '{\\displaystyle';

function isDisplayMath(el: Element): boolean {
  if (el.parentElement?.getAttribute('class')?.includes('katex-display')) return true;
  if (el.getAttribute('display') === 'true' || el.getAttribute('display') === 'block') return true;
  return !!el.querySelector('math[display="block"], img[class*="math-fallback-image-display"]');
}

function addMathRules(service: TurndownService): void {
  service.addRule('math', {
    filter: (node) => node.localName === 'mjx-container' || node.localName === 'math' || MATH_CLASS.test(node.getAttribute('class') ?? ''),
    replacement: (content, node) => {
      const tex = texOf(node);
      if (!tex) return content;
      return isDisplayMath(node) ? `\n\n$$${tex}$$\n\n` : `$${tex}$`;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Task lists
//
// A checkbox at the start of a list item (GitHub, GitLab and Gitea READMEs and issues, Jira and
// Notion exports, a <label> around it or not) is a GFM task: "- [x] Done". Readability and
// turndown both drop every <input>, so the box is made a marker element before either runs.

const TASK_ATTRIBUTE = 'data-task-state';

/** Replaces each checkbox that opens a list item among `inputs` with a marker turndown writes as "[x] " or "[ ] ". */
export function markTaskItems(inputs: Element[]): void {
  for (const input of inputs) {
    if ((input.getAttribute('type') ?? '').toLowerCase() !== 'checkbox' || !input.parentNode || !opensListItem(input)) continue;
    const marker = input.ownerDocument.createElement('span');
    marker.setAttribute(TASK_ATTRIBUTE, input.hasAttribute('checked') || input.getAttribute('aria-checked') === 'true' ? 'checked' : 'open');
    // Readability drops an empty inline element; the marker holds a character turndown never shows.
    marker.textContent = '\u200b';
    input.replaceWith(marker);
    // The marker writes its own space after the box.
    const next = marker.nextSibling;
    if (next?.nodeType === 3) (next as Text).data = (next as Text).data.replace(/^\s+/, '');
  }
}

/** Whether nothing but whitespace comes before `el` in its nearest <li>. */
function opensListItem(el: Element): boolean {
  let li: Element | null = el.parentElement;
  while (li && li.localName !== 'li') li = li.parentElement;
  if (!li) return false;
  for (let node: Node | null = el; node && node !== li; node = node.parentNode) {
    for (let before = node.previousSibling; before; before = before.previousSibling) if ((before.textContent ?? '').trim()) return false;
  }
  return true;
}

function addTaskListRules(service: TurndownService): void {
  service.addRule('task-marker', {
    filter: (node) => node.localName === 'span' && node.hasAttribute(TASK_ATTRIBUTE),
    replacement: (_content, node) => ((node as Element).getAttribute(TASK_ATTRIBUTE) === 'checked' ? '[x] ' : '[ ] '),
  });
}

// A footnote's mark ("1", "[12]", "a", "*", "†") or a note's way back to it ("^", "↑", "↩").
const BACK_LINK = /^(?:\^|↑|↩\uFE0E?|⤴)$/u;
const FOOTNOTE_LINK = /^(?:\[?(?:\d{1,3}|[a-z]|[*†‡])\]?|\^|↑|↩\uFE0E?|⤴)$/u;

// ---------------------------------------------------------------------------------------------
// Admonitions: a docs page's note, tip or warning box (Docusaurus, MkDocs and Sphinx, GitHub's
// markdown alerts, a Bootstrap alert with a heading). Its label came out as a stray word above
// the paragraph ("warning"), which reads as part of the text; a quote under the label in bold
// keeps what it is and where it ends.
const ADMONITION_CLASS = /(?:^|\s)(?:admonition|theme-admonition|markdown-alert|callout|alert)(?:\s|$)/;
const ADMONITION_TITLE_CLASS = /(?:^|\s)[\w-]*(?:admonition|callout|alert)[-_]?(?:title|heading)[\w-]*(?:\s|$)/i;

// A box named only as an admonition (not an alert or callout, which are as often a plain
// message): its first element is its label when it is this short and has no block inside.
// Readability retags a label <div> as a <p> without its class, so the name cannot be relied on.
const ADMONITION_ONLY_CLASS = /(?:^|\s)(?:admonition|theme-admonition|markdown-alert)(?:\s|$)/;
const MAX_LABEL_CHARS = 40;

/** The label of an admonition: its first element, named as its title or heading, or short and plain in a box named an admonition. */
function admonitionTitle(node: Element): Element | null {
  const cls = node.getAttribute('class') ?? '';
  if (!ADMONITION_CLASS.test(cls)) return null;
  const first = node.firstElementChild;
  const text = (first?.textContent ?? '').trim();
  if (!first || !text || !first.nextSibling) return null;
  if (ADMONITION_TITLE_CLASS.test(first.getAttribute('class') ?? '')) return first;
  const plain = text.length <= MAX_LABEL_CHARS && !first.querySelector('p, div, ul, ol, pre, table, blockquote');
  return plain && ADMONITION_ONLY_CLASS.test(cls) ? first : null;
}

function addAdmonitionRules(service: TurndownService): void {
  service.addRule('admonition', {
    filter: (node) => !!admonitionTitle(node),
    replacement: (content, node) => {
      const raw = (admonitionTitle(node)?.textContent ?? '').replace(/\s+/g, ' ').trim();
      const label = raw === raw.toLowerCase() ? raw.charAt(0).toUpperCase() + raw.slice(1) : raw;
      const body = content
        .trim()
        .split('\n')
        .map((line) => (line ? `> ${line}` : '>'))
        .join('\n');
      return `\n\n> **${label}**${body ? `\n>\n${body}` : ''}\n\n`;
    },
  });
  // The label is written by the rule above.
  service.addRule('admonition-title', {
    filter: (node) => !!node.parentElement && admonitionTitle(node.parentElement) === (node as unknown as Element),
    replacement: () => '',
  });
}
