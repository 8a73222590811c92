// A short post beside a longer block (a sidebar of teasers with summaries, a "latest news" column,
// a results round-up): Readability scores text length, so it took the longer block, or the row
// holding both. The page's own title heading says where the post is: the smallest container of
// its <h1> holding a post's worth of prose is the post (a <main>, an <article>, role=main, or a
// plain <div> beside the sidebar), and Readability's pick is checked against it afterwards.

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

/** The post around the page's title heading (its single <h1>, among `headings`, the body's), or null. */
export function findTitledPost(body: Element, headings: Element[]): TitledPost | null {
  if (headings.length !== 1) return null;
  for (let el = headings[0]!.parentElement; el && el !== body; el = el.parentElement) {
    if (el.localName === 'header' || HEADER_NAME.test(`${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`)) continue;
    // Read only as far as a post's worth at each level; the whole of the one found.
    if (proseOf(el, MIN_POST_CHARS).text.length < MIN_POST_CHARS) continue;
    const { text, longest } = proseOf(el, Number.POSITIVE_INFINITY);
    return { element: el, chars: text.length, lead: longest.slice(0, LEAD_CHARS), declared: isDeclaredMain(el) };
  }
  return null;
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
