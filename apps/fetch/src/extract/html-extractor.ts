import { Readability } from '@mozilla/readability';
import TurndownService from 'turndown';
import {
  ALL_RULES,
  findDeclaredBody,
  readLdArticleBodies,
  removeCounters,
  removeVoteCounts,
  removeDatelines,
  removeDuplicateBlocks,
  removeEdgeBoilerplate,
  removeLinkDenseBlocks,
  removePostMeta,
  removeConsentDialogs,
  removeNamedBoilerplate,
  removeTitleHeading,
  textLength,
  type ContentRules,
} from './content-rules.js';
import { addMarkdownRules, escapeMarkdown, markTaskItems, preformatCodeTable } from './markdown-rules.js';
import { factsNotShown, parseLdScripts } from './structured-data.js';
import { mayHoldTabs, revealTabPanels } from './tab-panels.js';
import { mayHoldThread, readThread, renderThread } from './thread.js';
import { findTitledPost, judgePick, type TitledPost } from './titled-post.js';
import { parsePage } from './parse-page.js';

export interface ExtractedPage {
  title: string | null;
  byline: string | null;
  description: string | null;
  canonical: string | null;
  lang: string | null;
  markdown: string;
  /** Whether Readability's main-content pick was used (false: the whole page, as a fallback). */
  readable: boolean;
}

// Readability's pick is used whenever it holds at least this many characters; below it (a page
// with no article: opening hours, a stub) the whole page is returned instead. There is no
// share-of-page test: on a short brief in a heavy portal, a teaser or a post above a long
// comment thread the pick is small beside the page and right, and the whole page was wrong.
const MIN_ARTICLE_CHARS = 140;
const REMOVED_IN_FALLBACK = 'head, title, script, style, noscript, template, svg, canvas, iframe, object, embed, form, button, nav, footer, header, aside';
// A single <article> (else a single <main>) holding at least this share of the page's text is
// where the content is; Readability then scores only it (bench/fetch: about a seventh of the
// extraction time on a 100 KB article goes to the navigation, asides and footer around it).
const DOMINANT_SCOPE_SHARE = 0.6;

/**
 * HTML to clean markdown. linkedom (not jsdom) for the DOM: it parses a 100 KB page several
 * times faster and Readability runs on it unchanged; turndown works on the element directly.
 * Attribute names arrive lowercased on HTML elements, as in a browser, only because linkedom is
 * patched (patches/linkedom@0.18.15.patch, linkedom#235): the lookups here rely on it.
 */
export class HtmlExtractor {
  private readonly turndown: TurndownService;
  private readonly rules: ContentRules;

  /** `rules`: all on in the service; the corpus bench turns each off to measure it. */
  constructor(rules: Partial<ContentRules> = {}) {
    this.rules = { ...ALL_RULES, ...rules };
    this.turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' });
    this.turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'form', 'button', 'select', 'input', 'textarea']);
    // turndown's escapes, narrowed where they corrupted identifiers (markdown-rules.ts).
    this.turndown.escape = escapeMarkdown;
    this.turndown.addRule('drop-images-without-alt', {
      filter: (node) => node.nodeName === 'IMG' && !(node as HTMLImageElement).getAttribute('alt'),
      replacement: () => '',
    });
    // turndown keeps line breaks inside an image's alt and title, and a blank line there ends the
    // `![...]` (a real page's multi-paragraph alt text broke the markdown around it): one line each.
    this.turndown.addRule('images-on-one-line', {
      filter: (node) => node.nodeName === 'IMG' && !!(node as HTMLImageElement).getAttribute('alt'),
      replacement: (_content, node) => {
        const img = node as HTMLImageElement;
        const alt = oneLine(img.getAttribute('alt'));
        const title = oneLine(img.getAttribute('title'));
        return `![${alt}](${img.getAttribute('src') ?? ''}${title ? ` "${title.replace(/"/g, '\\"')}"` : ''})`;
      },
    });
    addMarkdownRules(this.turndown);
    lookUpRulesByName(this.turndown);
  }

  extract(html: string, pageUrl: string): ExtractedPage {
    // linkedom does not infer a <body> as a browser does: a page without the tag (valid HTML, and
    // every fragment) would have an empty body, so the markup is put in one; the head elements
    // that land in it are read for metadata below and then removed.
    const wrapped = !/<body[\s>]/i.test(html);
    const source = wrapped ? `<!doctype html><html><head></head><body>${html}</body></html>` : html;
    const document = parsePage(source);
    // One walk for the metadata elements: each document.querySelector compiles its selector
    // and, for the absent ones, walks the whole page (half a dozen walks on a 100 KB page).
    const heads = elementsByTag(document, ['title', 'meta', 'link', 'base', 'script'], tagsSeen(document));
    const first = (tag: string, test: (el: Element) => boolean = () => true) => heads.find((el) => el.localName === tag && test(el));
    const attrIs =
      (name: string, value: string, caseInsensitive = false) =>
      (el: Element) => {
        const v = el.getAttribute(name);
        return v !== null && (caseInsensitive ? v.toLowerCase() === value : v === value);
      };
    const meta = (attr: string, value: string, caseInsensitive = false) => clean(first('meta', attrIs(attr, value, caseInsensitive))?.getAttribute('content'));

    // Readability resolves relative links against these; linkedom leaves them unset.
    const base = safeUrl(first('base', (el) => el.hasAttribute('href'))?.getAttribute('href') ?? '', pageUrl) ?? pageUrl;
    Object.defineProperty(document, 'baseURI', { value: base, configurable: true });
    Object.defineProperty(document, 'documentURI', { value: pageUrl, configurable: true });

    const canonicalHref = first('link', (el) => /(^|\s)canonical(\s|$)/i.test(el.getAttribute('rel') ?? ''))?.getAttribute('href');
    const head = {
      title: pageTitle(clean(first('title')?.textContent), meta('property', 'og:title')),
      description: meta('name', 'description', true) ?? meta('property', 'og:description') ?? meta('name', 'twitter:description'),
      author: meta('name', 'author', true) ?? meta('property', 'article:author'),
      canonical: canonicalHref ? safeUrl(canonicalHref, base) : null,
      lang: clean(document.documentElement?.getAttribute('lang')) ?? meta('http-equiv', 'content-language', true),
    };
    // JSON-LD, parsed once (bounded: structured-data.ts), for the declared body and the facts block.
    const ld = parseLdScripts(heads.filter((el) => el.localName === 'script'));
    // Checkboxes of task lists become markers before anything drops <input>s.
    if (document.body && tagsSeen(document).has('input')) markTaskItems(elementsByTag(document.body, ['input']));
    // A thread is its posts, read before anything is removed: a forum's posts are often named as
    // comments, which the furniture pass takes out, and Readability would keep one of them.
    const thread = this.rules.threads && document.body && mayHoldThread(source) ? readThread(document.body) : null;
    if (thread) {
      const posts = renderThread(document, thread);
      removeHeadingAnchors(allElements(posts));
      prepareForMarkdown(posts, base);
      // The page's author: the opening's when the discussion is about text outside the posts (a
      // reviewer is not the product page's author), else the first post's (a topic's starter).
      const opener = thread.opening ? thread.opening.author : (thread.posts[0]?.author ?? null);
      return {
        title: head.title,
        byline: head.author ?? opener,
        description: head.description,
        canonical: head.canonical,
        lang: head.lang,
        markdown: this.toMarkdown(posts),
        readable: true,
      };
    }
    // Read before prepareForReader takes the scripts out.
    const ldBodies = this.rules.declaredBody ? readLdArticleBodies(ld) : [];
    const tabs = mayHoldTabs(source);
    const prepared = prepareForReader(document, wrapped, this.rules, ldBodies, tabs);
    // The post around the title heading, to check Readability's pick against (titled-post.ts).
    // What the title heading is recognised by among several <h1>s (titled-post.ts).
    const pageTitles = [clean(first('title')?.textContent), meta('property', 'og:title')].filter((t): t is string => !!t);
    const post = prepared.titleHeadings && document.body ? findTitledPost(document.body, prepared.titleHeadings, pageTitles) : null;

    const reader = makeReader(document);
    (reader as unknown as ReaderInternals)._restorePage = pageRestorer(source, wrapped, this.rules, ldBodies, tabs);
    const picked = reader.parse();
    const verdict = post && picked?.textContent ? judgePick(post, picked.textContent) : 'keep';
    // A longer block beside the post, both inside the page's own main part (a lone <main> holding
    // a Q&A page's question and, beside it, its answers, of which Readability keeps one): both
    // are content, the post first (it holds the title), then the block picked with the blocks
    // after it that share its markup (the other answers). Outside such a part the block beside
    // the post is a sidebar, and the row holding both is the post and its sidebar: the post alone.
    const beside = prepared.scoped && verdict === 'beside' ? longestRun(picked?.content as unknown as Element | undefined) : undefined;
    const article = verdict === 'keep' ? picked : (readPostAlone(source, wrapped, this.rules, ldBodies, tabs, pageTitles, beside) ?? picked);
    const articleChars = normalisedLength(article?.textContent ?? '');
    const plausible = article?.content != null && articleChars >= MIN_ARTICLE_CHARS;
    const titles = [head.title, meta('property', 'og:title'), clean(article?.title)].filter((t): t is string => !!t);

    let markdown: string;
    if (plausible) {
      if (this.rules.linkDensity) removeLinkDenseBlocks(article.content as unknown as Element);
      if (this.rules.titleHeading) removeTitleHeading(article.content as unknown as Element, titles);
      if (this.rules.duplicateBlocks) removeDuplicateBlocks(article.content as unknown as Element);
      if (this.rules.datelines) removeDatelines(article.content as unknown as Element);
      if (this.rules.counters) removeCounters(article.content as unknown as Element);
      if (this.rules.edgeBoilerplate) removeEdgeBoilerplate(article.content as unknown as Element);
      prepareForMarkdown(article.content as unknown as HTMLElement, base);
      // The title is the result's own field (web_fetch shows it beside the content), not a body line.
      markdown = this.toMarkdown(article.content as unknown as HTMLElement);
    } else {
      // Readability has mutated the first parse; the fallback works on a fresh one (rare path).
      const body = parsePage(source).body;
      if (body) {
        markTaskItems(elementsByTag(body, ['input']));
        if (tabs) revealTabPanels(allElements(body));
        for (const el of Array.from(body.querySelectorAll(REMOVED_IN_FALLBACK))) el.remove();
        const all = allElements(body);
        removeHeadingAnchors(all);
        if (this.rules.namedBoilerplate) removeConsentDialogs(all);
        if (this.rules.titleHeading) removeTitleHeading(body, titles);
        prepareForMarkdown(body, base);
        markdown = this.toMarkdown(body);
      } else {
        // The same source parses the same way: the first parse had no body either, so no text.
        markdown = '';
      }
    }
    const facts = withFacts(markdown, ld);
    return {
      title: head.title ?? clean(article?.title),
      byline: clean(article?.byline) ?? head.author ?? facts.author,
      description: head.description ?? clean(article?.excerpt),
      canonical: head.canonical,
      lang: head.lang ?? clean(article?.lang),
      markdown: facts.markdown,
      readable: plausible,
    };
  }

  /** `node` is consumed: turndown works on it in place instead of on a deep copy. */
  private toMarkdown(node: HTMLElement): string {
    // turndown deep-copies an element before its whitespace pass; the node is ours alone
    // (Readability's detached result, or a fresh parse), and linkedom's copy of a 100 KB article
    // cost about as much as the conversion itself.
    Object.defineProperty(node, 'cloneNode', { value: () => node, configurable: true });
    return this.turndown
      .turndown(node)
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }
}

/**
 * The markdown with, after it, the JSON-LD facts it does not show (a price a script writes in,
 * a recipe card Readability left out), under a heading saying where they come from.
 */
function withFacts(markdown: string, ld: unknown[]): { markdown: string; author: string | null } {
  if (ld.length === 0) return { markdown, author: null };
  const { lines, author } = factsNotShown(ld, markdown);
  if (lines.length === 0) return { markdown, author };
  return { markdown: `${markdown ? `${markdown}\n\n` : ''}## From the page's structured data\n\n${lines.join('\n')}`, author };
}

/**
 * Readability on the page scoped to the post around its title heading (a fresh parse, prepared
 * as extract() prepares it: Readability has consumed the first). Null when the post is not found
 * again. With `beside` (a text run of a block beside the post in the same main part), that block's
 * series (seriesBeside) follows the post.
 */
function readPostAlone(source: string, wrapped: boolean, rules: ContentRules, ldBodies: string[], tabs: boolean, titles: string[], beside?: string): ReaderResult {
  const document = parsePage(source);
  elementsByTag(document, [], tagsSeen(document));
  if (document.body) markTaskItems(elementsByTag(document.body, ['input']));
  const { titleHeadings } = prepareForReader(document, wrapped, rules, ldBodies, tabs);
  const body = document.body;
  const post: TitledPost | null = titleHeadings && body ? findTitledPost(body, titleHeadings, titles) : null;
  if (!post || !body) return null;
  const series = beside ? seriesBeside(post.element, body, beside) : [];
  body.replaceChildren(post.element);
  const read = makeReader(document).parse();
  if (!read || series.length === 0) return read;
  // The series never went through Readability: it is cleaned as Readability cleans its pick
  // (asides, embeds, forms, link-dense or negatively named boxes, headers of such boxes), by a
  // fresh reader: the one that read the post alone may have turned its conditional cleaning off
  // on the way (its retries for a short post), which says nothing about the answers.
  const wrapper = document.createElement('div');
  wrapper.append(...series);
  (makeReader(document) as unknown as ReaderInternals)._prepArticle(wrapper);
  const content = read.content as unknown as Element;
  const cleaned = Array.from(wrapper.children);
  content.append(...cleaned);
  return { ...read, textContent: `${read.textContent ?? ''}\n${cleaned.map((el) => el.textContent ?? '').join('\n')}` };
}

type ReaderResult = ReturnType<Readability<Node>['parse']>;

/**
 * The block holding the text run `run` beside `post` (the child of their nearest common container
 * that holds it), with the elements before and after it that share its tag and class (the other
 * answers of a Q&A page, when Readability picked one), in page order. Empty when the run is not
 * found, or is in the post.
 */
function seriesBeside(post: Element, body: Element, run: string): Element[] {
  const walker = body.ownerDocument.createTreeWalker(body, 4 /* SHOW_TEXT */);
  let at: Element | null = null;
  for (let t = walker.nextNode(); t && !at; t = walker.nextNode()) if (normaliseSpace((t as Text).data).includes(run)) at = t.parentElement;
  if (!at || post.contains(at)) return [];
  let block: Element = at;
  while (block.parentElement && !block.parentElement.contains(post)) block = block.parentElement;
  if (!block.parentElement) return [];
  // Every sibling sharing its markup, before it too: Readability may pick the last answer.
  const key = `${block.localName} ${block.getAttribute('class') ?? ''}`;
  return Array.from(block.parentElement.children).filter((el) => el === block || (`${el.localName} ${el.getAttribute('class') ?? ''}` === key && !el.contains(post)));
}

/** The start of the longest text run under `root`, spaces squashed: how a block is found again in another parse. */
function longestRun(root: Element | undefined): string | undefined {
  if (!root) return undefined;
  let longest = '';
  const walker = root.ownerDocument.createTreeWalker(root, 4 /* SHOW_TEXT */);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) if ((t as Text).data.length > longest.length) longest = (t as Text).data;
  const run = normaliseSpace(longest).slice(0, 60);
  return run.length >= 20 ? run : undefined;
}

interface PreparedPage {
  /** The <h1>s in what is left of the body, unless the page declares its body (the declared body is the text). */
  titleHeadings: Element[] | null;
  /** Whether the body was scoped to its dominant container (a lone <article> or <main>). */
  scoped: boolean;
}

/**
 * Takes out what is never content, keeps <html> and <body> out of Readability's removals and,
 * when there is one, scopes the body to its dominant container.
 */
function prepareForReader(document: Document, wrapped: boolean, rules: ContentRules, ldBodies: string[], tabs: boolean): PreparedPage {
  // Script and style text is not page text (Readability drops them too).
  for (const el of elementsByTag(document, ['script', 'style', 'noscript', 'template'])) el.remove();
  if (wrapped && document.body) for (const el of elementsByTag(document.body, ['head', 'title', 'meta', 'link', 'base'])) el.remove();
  protectRoot(document);
  const body = document.body;
  if (!body) return { titleHeadings: null, scoped: false };
  // One walk for every pass below (each walk of a 100 KB page is a measurable share).
  const all = allElements(body);
  removeHeadingAnchors(all);
  if (rules.counters) removeVoteCounts(all);
  if (rules.postMeta) removePostMeta(all);
  // Before anything judges what is hidden or what is a link list: inactive tabs are content.
  if (tabs) revealTabPanels(all);
  if (rules.declaredBody || rules.namedBoilerplate) {
    const declared = rules.declaredBody ? findDeclaredBody(body, all, ldBodies) : null;
    if (rules.namedBoilerplate) {
      // What holds the story: its heading, <main>, and <article> when there is one (several are
      // teaser cards or posts, and a "more news" strip of them is still furniture).
      const articles = all.filter((el) => el.localName === 'article');
      const keep = all.filter((el) => el.localName === 'h1' || el.localName === 'main');
      if (articles.length === 1) keep.push(articles[0]!);
      removeNamedBoilerplate(all, declared ? [...keep, declared] : keep);
    }
    // The page's own word on where its text is, over any guess about the page around it.
    if (declared?.parentNode) {
      body.replaceChildren(declared);
      return { titleHeadings: null, scoped: false };
    }
  }
  const scope = dominantContainer(body, normalisedTextLength(body));
  if (scope) body.replaceChildren(scope);
  // Inside a dominant container the title's post is still checked: a Q&A page's <main> holds
  // the question and, beside it, the longer answers Readability picks alone.
  const root = scope ?? body;
  return { titleHeadings: all.filter((el) => el.localName === 'h1' && el.parentNode && (!scope || root.contains(el))), scoped: !!scope };
}

// A heading's permalink or edit link: MediaWiki's edit section, Sphinx's "¶" (a.headerlink),
// Docusaurus' zero-width a.hash-link, GitHub's empty a.anchor; and any link to a fragment whose
// text is at most such a mark, inside or beside a heading.
const HEADING_LINK_CLASS = /(?:^|\s)(?:mw-editsection|headerlink|hash-link|anchor)(?:\s|$)/;
const ANCHOR_MARK = /^[\s\u200b-\u200d\ufeff¶§#🔗⚓]*$/u;
const isHeading = (el: Element | null) => !!el && /^h[1-6]$/.test(el.localName);

/**
 * Removes heading permalinks and edit links before Readability scores (report finding 8): beside
 * a short heading they make its wrapper look link-dense ("Zeros[edit]": 4 of 11 characters are a
 * link), and Readability's "suspiciously short" test then drops MediaWiki's h2s with their
 * wrapper; the rest leaked as [¶](#…), [​](#…) or [](#ripq).
 */
function removeHeadingAnchors(elements: Element[]): void {
  for (const el of elements) {
    if ((el.localName !== 'a' && el.localName !== 'span') || !el.parentNode) continue;
    const cls = el.getAttribute('class') ?? '';
    if (el.localName === 'span') {
      if (cls.includes('mw-editsection')) el.remove();
      continue;
    }
    const href = el.getAttribute('href')?.trim() ?? '';
    if (!ANCHOR_MARK.test(el.textContent ?? '') || el.getElementsByTagName('img').length > 0) continue;
    const beside = isHeading(el.previousElementSibling) || isHeading(el.nextElementSibling);
    let inside = false;
    for (let a = el.parentElement; a && !inside; a = a.parentElement) inside = isHeading(a);
    if (HEADING_LINK_CLASS.test(cls) || (href.startsWith('#') && (inside || beside))) el.remove();
  }
}

const HIDING_ATTRIBUTES = ['role', 'hidden', 'aria-hidden', 'style'];

/**
 * Readability's walk starts at <html> and spares only <body> (and links) from its removal by
 * class and id, and neither from its removal by role or as hidden: an
 * <html class="header-spacing"> matches its unlikely-candidate pattern and the whole document
 * goes, after which linkedom has no body and none of the clean-up finds anything, so the
 * navigation stays; a <body aria-hidden="true"> (a page rendered with a dialog open) goes too.
 * What the root and body carry there says nothing about which part of the page is content
 * (lang, read before this, is kept; body's class still weighs in Readability's scoring).
 */
function protectRoot(document: Document): void {
  const root = document.documentElement;
  if (!root) return;
  for (const name of ['class', 'id', ...HIDING_ATTRIBUTES]) root.removeAttribute(name);
  const body = document.body;
  if (body) for (const name of HIDING_ATTRIBUTES) body.removeAttribute(name);
}

/**
 * Readability (patched, patches/@mozilla__readability@0.6.0.patch) serialised the whole page
 * before every parse to put it back if its first pick came out too short and it retries with
 * looser rules. Most pages never retry; this makes the same page state only when one does: the
 * source parsed again, prepared as extract() prepared it, and put through the steps Readability
 * takes before its pick (noscript images, scripts, _prepDocument; reading JSON-LD and metadata
 * changes nothing). Made once, then reused for each further retry.
 */
function pageRestorer(source: string, wrapped: boolean, rules: ContentRules, ldBodies: string[], tabs: boolean): (page: HTMLElement) => void {
  let html: string | undefined;
  return (page) => {
    if (html === undefined) {
      const document = parsePage(source);
      // Fills the tag set the reader's queries rely on (tagsSeen), as the metadata walk does.
      elementsByTag(document, [], tagsSeen(document));
      if (document.body) markTaskItems(elementsByTag(document.body, ['input']));
      prepareForReader(document, wrapped, rules, ldBodies, tabs);
      const reader = makeReader(document) as unknown as ReaderInternals;
      reader._unwrapNoscriptImages(document);
      reader._removeScripts(document);
      reader._prepDocument();
      html = document.body?.innerHTML ?? '';
    }
    page.innerHTML = html;
  };
}

interface ReaderInternals {
  _getClassWeight: (node: Element) => number;
  _prepArticle: (articleContent: Element) => void;
  _fixRelativeUris: () => void;
  _getAllNodesWithTag: (node: Element, tagNames: string[]) => Element[];
  _isProbablyVisible: (node: Element) => boolean;
  _isValidByline: (node: Element, matchString: string) => boolean;
  _unwrapNoscriptImages: (doc: Document) => void;
  _removeScripts: (doc: Document) => void;
  _prepDocument: () => void;
  /** Added by the patch: when set, the page is put back by it on a retry instead of from a copy made up front. */
  _restorePage?: (page: HTMLElement) => void;
}

/**
 * Readability 0.6.0 (pinned) on linkedom, with three of its steps done the cheaper way. Each
 * replacement keeps the step's result; together they were about a fifth of the extraction time
 * on bench/fetch's 100 KB article (CPU profile).
 */
function makeReader(document: Document): Readability<Node> {
  // keepClasses: turndown ignores classes, so the pass stripping them is wasted work.
  const reader = new Readability<Node>(document, { serializer: (el) => el, charThreshold: 300, keepClasses: true });
  const internals = reader as unknown as ReaderInternals;
  // Each replacement is made as a const, then assigned: V8 pretenures a function literal assigned
  // to a property (eslint.config.js), and a reader is made per page.
  // Every link was resolved with new URL(href, baseString), reparsing the base each time: a
  // third of its run on a link-heavy page. prepareForMarkdown does the same job with a fast path.
  internals._fixRelativeUris = doNothing;
  // querySelectorAll compiles its selector on every call in linkedom, and Readability makes one
  // call per paragraph; a walk by tag name gives the same elements in the same document order.
  // A tag the document never held is answered without a walk (tagsSeen).
  const seen = tagsSeen(document);
  const allNodesWithTag: ReaderInternals['_getAllNodesWithTag'] = (node, tagNames) => (tagNames.some((t) => seen.has(t.toLowerCase())) ? elementsByTag(node, tagNames) : []);
  internals._getAllNodesWithTag = allNodesWithTag;
  // The byline check read the whole text of every element it was asked about (the body and the
  // article included) before testing the cheap conditions; the same test, text read last.
  const bylineRe = (reader as unknown as { REGEXPS: { byline: RegExp } }).REGEXPS.byline;
  const isValidByline: ReaderInternals['_isValidByline'] = (node, matchString) => {
    const itemprop = node.getAttribute('itemprop');
    if (!(node.getAttribute('rel') === 'author' || (itemprop && itemprop.includes('author')) || bylineRe.test(matchString))) return false;
    const bylineLength = (node.textContent ?? '').trim().length;
    return !!bylineLength && bylineLength < 100;
  };
  internals._isValidByline = isValidByline;
  // Without a style attribute, linkedom's style object (built and parsed per element) can only
  // say "visible"; the original check runs only where there is a style to read.
  const isProbablyVisible = internals._isProbablyVisible.bind(reader);
  const cheaplyVisible: ReaderInternals['_isProbablyVisible'] = (node) =>
    node.hasAttribute('style')
      ? isProbablyVisible(node)
      : !node.hasAttribute('hidden') && (node.getAttribute('aria-hidden') !== 'true' || (typeof node.className === 'string' && node.className.includes('fallback-image')));
  internals._isProbablyVisible = cheaplyVisible;
  // Docs sites wrap a code block in a box named for its scrollbar (div.scroll,
  // .highlight-scroll, .pre-scrollable, .overflow-scroll, .hidden-scrollbar), and "scroll" and
  // "hidden" are in Readability's negative pattern: its conditional cleaning removed the box with
  // the code in it. What a box of code is named for says nothing about whether it is content, so
  // its name weighs nothing against it; a box that is mostly something else keeps its weight.
  if (seen.has('pre') || seen.has('code')) {
    const classWeight = internals._getClassWeight.bind(reader);
    const weighCodeByContent: ReaderInternals['_getClassWeight'] = (node) => {
      const weight = classWeight(node);
      return weight < 0 && mostlyCode(node) ? 0 : weight;
    };
    internals._getClassWeight = weighCodeByContent;
  }
  return reader;
}

/**
 * Whether at least half of the element's visible characters are in code (<pre>, <code>): a code
 * block with its caption or copy button, not a link list with a snippet in it.
 */
function mostlyCode(el: Element): boolean {
  const all = textLength(el);
  if (all === 0) return false;
  let code = 0;
  for (const block of elementsByTag(el, ['pre', 'code'])) {
    // Nested code (<pre><code>) is counted once, at its outermost element.
    let nested = false;
    for (let a = block.parentElement; a && a !== el && !nested; a = a.parentElement) nested = a.localName === 'pre' || a.localName === 'code';
    if (!nested) code += textLength(block);
  }
  return code * 2 >= all;
}

const doNothing = (): void => undefined;

/**
 * elementsByTag, when given `seen`, also records in it the tag name of every element it walks
 * past; `seen` is then kept up to date for elements made later (see tagsSeen).
 */
function elementsByTag(root: Element | Document, tagNames: string[], seen?: Set<string>): Element[] {
  const isDocument = root.nodeType === 9;
  const doc = isDocument ? (root as Document) : (root as Element).ownerDocument;
  // linkedom's walker over a document needs its <html> (none: nothing to find); over an element
  // it needs only the element, so the article and the body are walked even when <html> is gone.
  if (!doc || (isDocument && !doc.documentElement)) return [];
  const wanted = new Set(tagNames.map((t) => t.toLowerCase()));
  const out: Element[] = [];
  // linkedom's tree walker is one pass over its node list (its element getters walk siblings).
  const walker = doc.createTreeWalker(root, 1 /* SHOW_ELEMENT */);
  for (let el = walker.nextNode() as Element | null; el; el = walker.nextNode() as Element | null) {
    if (wanted.has(el.localName)) out.push(el);
    seen?.add(el.localName);
  }
  return out;
}

/** Every element under `root`, in document order (one walk). */
function allElements(root: Element): Element[] {
  const out: Element[] = [];
  const walker = root.ownerDocument.createTreeWalker(root, 1 /* SHOW_ELEMENT */);
  for (let el = walker.nextNode() as Element | null; el; el = walker.nextNode() as Element | null) out.push(el);
  return out;
}

const TAGS_SEEN = new WeakMap<Document, Set<string>>();

/**
 * The tag names the document has ever held: filled by the first whole-document elementsByTag
 * walk, then by every createElement (Readability's only way of making elements, besides
 * restoring its own copy of the page on a retry, which holds no new names). A tag that was
 * never seen cannot be in the tree, so Readability's per-tag cleaning passes (object, embed,
 * iframe, input, textarea, select, button...) can skip their walk of the whole article.
 */
function tagsSeen(document: Document): Set<string> {
  let seen = TAGS_SEEN.get(document);
  if (!seen) {
    const made = new Set<string>();
    seen = made;
    TAGS_SEEN.set(document, made);
    const createElement = document.createElement.bind(document);
    Object.defineProperty(document, 'createElement', {
      configurable: true,
      value: (name: string, options?: ElementCreationOptions) => {
        made.add(String(name).toLowerCase());
        return createElement(name, options);
      },
    });
  }
  return seen;
}

/**
 * The body's dominant container, if it has one: the body is then scoped to it, so Readability
 * neither scores nor cleans the page around it. Only a lone <article> or <main> counts: several
 * <article>s are a listing or a forum thread, where Readability's own pick is needed.
 */
function dominantContainer(body: Element, pageChars: number): Element | null {
  if (pageChars === 0) return null;
  // One walk for both tags (getElementsByTagName walked the body once per tag).
  const containers = elementsByTag(body, ['article', 'main']);
  for (const tag of ['article', 'main']) {
    const found = containers.filter((el) => el.localName === tag);
    if (found.length !== 1) continue;
    const container = found[0]!;
    if (normalisedTextLength(container) >= pageChars * DOMINANT_SCOPE_SHARE) return container;
  }
  return null;
}

/** Links and images resolved against the page, and code tables made <pre> (markdown-rules.ts), in one walk of the part converted. */
function prepareForMarkdown(root: HTMLElement, base: string): void {
  const baseUrl = new URL(base);
  // One walk for all (querySelectorAll compiled its selector and walked the tree per call).
  for (const el of elementsByTag(root, ['a', 'img', 'table'])) {
    if (el.localName === 'table') {
      if (el.parentNode) preformatCodeTable(el);
    } else if (el.localName === 'a') {
      const href = el.getAttribute('href');
      if (href === null) continue;
      // A javascript: link is kept as its text only.
      if (/^\s*javascript:/i.test(href)) el.removeAttribute('href');
      else el.setAttribute('href', resolveHref(href, baseUrl));
    } else {
      const src = el.getAttribute('src');
      if (src !== null) el.setAttribute('src', resolveHref(src, baseUrl));
    }
  }
}

interface TurndownRule {
  filter: string | string[] | ((node: HTMLElement, options: unknown) => unknown);
}
interface TurndownRules {
  array: TurndownRule[];
  _keep: TurndownRule[];
  _remove: TurndownRule[];
  blankRule: TurndownRule;
  defaultRule: TurndownRule;
  options: unknown;
  forNode: (node: HTMLElement & { isBlank?: boolean }) => TurndownRule;
}

/**
 * turndown 7.2 finds an element's rule by trying its rules in order, and each rule named by tag
 * reads nodeName (on linkedom a getter that upper-cases the name) and lower-cases it again: a
 * score of times per element. The same search in the same order, the name read once and the
 * tag-named rules answered from a set. Call after the last addRule/keep/remove.
 */
function lookUpRulesByName(service: TurndownService): void {
  const rules = (service as unknown as { rules: TurndownRules }).rules;
  const compile = (list: TurndownRule[]) =>
    list.map((rule) => ({ rule, names: typeof rule.filter === 'string' ? new Set([rule.filter]) : Array.isArray(rule.filter) ? new Set(rule.filter) : null }));
  const lists = [compile(rules.array), compile(rules._keep), compile(rules._remove)];
  // A const first: V8 pretenures a function literal assigned to a property (eslint.config.js).
  const forNode: TurndownRules['forNode'] = (node) => {
    if (node.isBlank) return rules.blankRule;
    const name = node.nodeName.toLowerCase();
    for (const list of lists) {
      for (const { rule, names } of list) {
        if (names ? names.has(name) : (rule.filter as (node: HTMLElement, options: unknown) => unknown).call(rule, node, rules.options)) return rule;
      }
    }
    return rules.defaultRule;
  };
  rules.forNode = forNode;
}

/** new URL(href, base), skipped for the two forms that need no parser: absolute http(s) and a plain root-relative path. */
function resolveHref(raw: string, base: URL): string {
  const href = raw.trim();
  if (/^https?:\/\/[^\s\\]*$/i.test(href) || href.startsWith('#')) return href;
  if (/^\/(?!\/)[^\s\\%]*$/.test(href) && !/(^|\/)\.\.?(\/|\?|#|$)/.test(href)) return base.origin + href;
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

// What sites put between a page's own title and their name: "Title | Site", "Title - Site"…
const SITE_NAME_SEPARATOR = /^\s+[|\-–—·•:»]\s+\S/;

/**
 * <title>, but the og:title when the <title> is it plus the site's name after a separator
 * (report finding 18: "Harbour city votes… | The Daily Courier"); the site's name is not the
 * page's. Readability's _getArticleTitle strips separators the same way. A <title> that differs
 * otherwise is the page's own choice and is kept.
 */
function pageTitle(title: string | null, ogTitle: string | null): string | null {
  if (title && ogTitle && title.length > ogTitle.length && title.startsWith(ogTitle) && SITE_NAME_SEPARATOR.test(title.slice(ogTitle.length))) return ogTitle;
  return title ?? ogTitle;
}

function safeUrl(href: string, base: string): string | null {
  if (!href.trim()) return null;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return null;
  }
}

function clean(v: string | null | undefined): string | null {
  if (v == null) return null;
  const s = normaliseSpace(v);
  return s.length > 0 ? s : null;
}

/** normaliseSpace(s).length without building the string (it runs on whole pages). */
function normalisedLength(s: string): number {
  const state = { n: 0, pendingSpace: false };
  countNormalised(s, state);
  return state.n;
}

/**
 * normalisedLength(root.textContent) without building the text: textContent is the root's text
 * nodes joined in document order, so they are counted one by one with the state carried across
 * (on linkedom the joined string of a 100 KB page was a large share of the count's cost).
 */
function normalisedTextLength(root: Node): number {
  const state = { n: 0, pendingSpace: false };
  const doc = root.ownerDocument;
  if (!doc) return 0;
  // Text and CDATA, the two node types linkedom's textContent joins.
  const walker = doc.createTreeWalker(root, 4 /* SHOW_TEXT */ | 8 /* SHOW_CDATA_SECTION */);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) countNormalised((t as Text).data, state);
  return state.n;
}

function countNormalised(s: string, state: { n: number; pendingSpace: boolean }): void {
  let { n, pendingSpace } = state;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // ASCII answered by code, the rest by the same \s as normaliseSpace.
    const space = c < 128 ? c === 32 || (c >= 9 && c <= 13) : /\s/.test(s[i]!);
    if (space) {
      pendingSpace = n > 0;
    } else {
      if (pendingSpace) n++;
      pendingSpace = false;
      n++;
    }
  }
  state.n = n;
  state.pendingSpace = pendingSpace;
}

export function normaliseSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** An attribute's text on one line: every run of whitespace (line breaks too) one space. */
function oneLine(text: string | null): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}
