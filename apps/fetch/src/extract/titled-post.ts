// A short post beside a longer block (a sidebar of teasers with summaries, a "latest news" column,
// a results round-up): Readability scores text length, so it took the longer block, or the row
// holding both. The page's own title heading says where the post is: the smallest container of
// its <h1> holding a post's worth of prose is the post (a <main>, an <article>, role=main, or a
// plain <div> beside the sidebar), and Readability's pick is checked against it afterwards. A page
// may have more than one <h1> (a site's name set as one, a widget's heading): titleHeading says which.

// A post's worth of prose: what the extractor takes as an article at all (MIN_ARTICLE_CHARS).
const MIN_POST_CHARS = 140;
// The pick is beside the post only when the post is not a sliver of it (a standfirst beside the
// story body is about a twentieth of it; a short post beside a sidebar about a third).
const MIN_POST_SHARE = 0.2;
// The pick holds the post and far more (the row around the post and the sidebar): more than this many times the post.
const MAX_PICK_TIMES = 2;
const LEAD_CHARS = 60;
// A page's header block around its title (standfirst, byline, date): not the post itself.
const HEADER_NAME = /(?:^|[\s_-])(?:header|head|hero|masthead|title|headline)(?:$|[\s_-])/i;
// What goes with a title rather than after it: a standfirst, a byline, a date. Not counted as the
// post's prose, so that a title block with a long standfirst is not taken for the post.
const BESIDE_TITLE_NAME = /(?:^|[\s_-])(?:standfirst|dek|lede|lead|summary|intro|subtitle|subhead|excerpt|kicker|byline|meta|date|time)(?:$|[\s_-])/i;

export interface TitledPost {
  element: Element;
  /** Prose characters of the post (text outside links and headings, spaces squashed). */
  chars: number;
  /** The start of its longest run of text, spaces squashed and case folded: how the post is recognised in a pick (its first words may be a line Readability drops). */
  lead: string;
  /** Whether the page declares it as its main part (<main>, <article>, role=main, itemprop=articleBody). */
  declared: boolean;
}

/** The post around the page's title heading (titleHeading, among `headings`, the body's <h1>s), or null. */
export function findTitledPost(body: Element, headings: Element[], titles: string[]): TitledPost | null {
  const heading = titleHeading(headings, titles);
  if (!heading) return null;
  for (let el = heading.parentElement; el && el !== body; el = el.parentElement) {
    if (el.localName === 'header' || HEADER_NAME.test(`${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`)) continue;
    // Read only as far as a post's worth at each level; the whole of the one found.
    if (proseOf(el, MIN_POST_CHARS).text.length < MIN_POST_CHARS) continue;
    const { text, longest } = proseOf(el, Number.POSITIVE_INFINITY);
    return { element: el, chars: text.length, lead: longest.slice(0, LEAD_CHARS), declared: isDeclaredMain(el) };
  }
  return null;
}

// Where a site's own name or a widget's heading sits. A <header> is the page's only outside an
// <article> or <main> (inside one it is the post's own, title and byline).
const CHROME_TAGS = new Set(['nav', 'aside', 'footer']);

/**
 * The page's title heading among its <h1>s: the only one; else the only one that is not a link
 * (a site's name linking home) nor in the page's header, navigation, aside or footer; else, among
 * those, the only one the page's <title> (or og:title) repeats, else the only one it starts with.
 * Null when nothing tells them apart.
 */
function titleHeading(headings: Element[], titles: string[]): Element | null {
  if (headings.length <= 1) return headings[0] ?? null;
  const own = headings.filter((h) => !isLinkOnly(h) && !inChrome(h));
  if (own.length === 1) return own[0]!;
  const pool = own.length > 0 ? own : headings;
  const folded = titles.map(fold);
  const named = pool.map((h) => ({ h, text: fold(h.textContent ?? '').trim() })).filter(({ text }) => text.length >= 3 && folded.some((t) => t.includes(text)));
  if (named.length === 1) return named[0]!.h;
  const leading = named.filter(({ text }) => folded.some((t) => t.trim().startsWith(text)));
  return leading.length === 1 ? leading[0]!.h : null;
}

/** Whether all of the heading's text is inside links. */
function isLinkOnly(heading: Element): boolean {
  const links = Array.from(heading.getElementsByTagName('a'));
  if (links.length === 0) return false;
  const inLinks = links.reduce((n, a) => n + (a.textContent ?? '').trim().length, 0);
  return inLinks >= (heading.textContent ?? '').trim().length;
}

function inChrome(el: Element): boolean {
  let header = false;
  for (let a = el.parentElement; a; a = a.parentElement) {
    const tag = a.localName;
    if (CHROME_TAGS.has(tag)) return true;
    if (tag === 'article' || tag === 'main' || a.getAttribute('role') === 'main') return false;
    if (tag === 'header' || a.getAttribute('role') === 'banner') header = true;
  }
  return header;
}

export type PickVerdict = 'keep' | 'beside' | 'around';

/**
 * Whether Readability's pick (its text) is the post: 'beside' when it does not hold the post's
 * lead and the post is not a sliver of it; 'around' when it holds a declared post and more than
 * MAX_PICK_TIMES its prose besides (the row of the post and its sidebar); else 'keep'.
 */
export function judgePick(post: TitledPost, pickText: string): PickVerdict {
  const pick = fold(pickText);
  if (!pick.includes(post.lead)) return post.chars >= pick.length * MIN_POST_SHARE ? 'beside' : 'keep';
  return post.declared && pick.length > post.chars * MAX_PICK_TIMES + post.chars ? 'around' : 'keep';
}

function isDeclaredMain(el: Element): boolean {
  return el.localName === 'main' || el.localName === 'article' || el.getAttribute('role') === 'main' || !!el.getAttribute('itemprop')?.split(/\s+/).includes('articleBody');
}

/** Text outside links and headings, folded, and its longest text run; the walk stops once `enough` characters are read. */
function proseOf(el: Element, enough: number): { text: string; longest: string } {
  let out = '';
  let longest = '';
  // Characters other than spaces read so far: the folded text is at least this long.
  let letters = 0;
  const walk = (node: Element) => {
    for (let c = node.firstChild; c && letters < enough; c = c.nextSibling) {
      if (c.nodeType === 3) {
        const data = (c as Text).data;
        out += data;
        if (data.length > longest.length) longest = data;
        letters += data.replace(/\s+/g, '').length;
      } else if (c.nodeType === 1) {
        const child = c as Element;
        const tag = child.localName;
        if (tag === 'a' || /^h[1-6]$/.test(tag) || tag === 'script' || tag === 'style' || tag === 'time') continue;
        if (child.hasAttributes() && BESIDE_TITLE_NAME.test(`${child.getAttribute('class') ?? ''} ${child.getAttribute('id') ?? ''}`)) continue;
        out += ' ';
        walk(c as Element);
      }
    }
  };
  walk(el);
  return { text: fold(out).trim(), longest: fold(longest).trim() };
}

function fold(s: string): string {
  return s.replace(/\s+/g, ' ').toLowerCase();
}
