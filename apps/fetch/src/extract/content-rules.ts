// The rules that go beyond Readability, each measured on the corpus (apps/fetch/test/fixtures/
// corpus, bench/fetch/corpus-score.mjs; figures in bench/fetch/README.md) and each kept only for
// its gain there. Studied from what trafilatura and its ports do (a page's own declaration of its
// body, boilerplate named by class and id, link density), written here for linkedom and for
// running around Readability rather than instead of it.

/** Each rule can be turned off, so that its gain can be measured (bench/fetch/corpus-score.mjs). */
export interface ContentRules {
  /** Scope the page to the body it declares: `itemprop="articleBody"`, or the elements holding JSON-LD's `articleBody`. */
  declaredBody: boolean;
  /** Remove furniture named as such by class, id or role (share bars, related links, comments, cookie banners...) before Readability scores. */
  namedBoilerplate: boolean;
  /** Remove blocks of Readability's pick that are mostly link text (link lists, breadcrumbs, "read more" lines). */
  linkDensity: boolean;
  /** Drop the pick's leading heading when it is the page's title (the title is the result's own field). */
  titleHeading: boolean;
  /** Drop a block of the pick whose text repeats an earlier block's, and an image alt that repeats a block (gallery copies of a caption, pull quotes). */
  duplicateBlocks: boolean;
  /** Drop a short block at the start or the end of the pick that is only a date ("Updated 5:27 am, Nov. 20, 2019"). */
  datelines: boolean;
  /**
   * Drop a gallery's position counters ("1 of 5", "Image 3 of 12", "Photo 2 / 8") and vote counts
   * (a bare number in an element named for votes: a Q&A page's "17" above each answer).
   */
  counters: boolean;
  /** Read a forum topic, a Q&A page or an issue as its series of posts, each with its author and date (thread.ts). */
  threads: boolean;
  /** Drop link trails (breadcrumbs, bars of links, share lines) at the pick's edges and a legal line at its end, named or not. */
  edgeBoilerplate: boolean;
  /**
   * Drop a post's meta lines ("asked 2 years ago · viewed 48k times", "answered 3 days ago ·
   * link", "Modified today"), by their markers, not their words.
   */
  postMeta: boolean;
}

export const ALL_RULES: ContentRules = {
  declaredBody: true,
  namedBoilerplate: true,
  linkDensity: true,
  titleHeading: true,
  duplicateBlocks: true,
  datelines: true,
  counters: true,
  threads: true,
  edgeBoilerplate: true,
  postMeta: true,
};

/**
 * Readability drops a heading that repeats the title only when its own similarity test says so,
 * which misses titles with a site name in scripts without spaces, short titles and others: the
 * first heading of the pick, when nothing but furniture comes before it and its text is one of
 * `titles` or contained in one, is removed.
 */
export function removeTitleHeading(root: Element, titles: string[]): void {
  // The titles, and their parts around a site-name separator ("Headline | Site", "Page – Docs").
  const wanted = new Set<string>();
  for (const title of titles) {
    const t = squash(title).toLowerCase();
    if (t) wanted.add(t);
    for (const part of t.split(/\s[|–—·:-]\s/)) if (part.length >= 8) wanted.add(part);
  }
  if (wanted.size === 0) return;
  // A heading is the title when it is one of them, part of one, or one of them continued
  // ("Store.open" titles the page whose heading reads "Store.open(path, options)").
  const isTitle = (text: string) => [...wanted].some((t) => t === text || (text.length >= 8 && t.includes(text)) || (t.length >= 8 && text.startsWith(t)));
  const walker = root.ownerDocument.createTreeWalker(root, 1 /* SHOW_ELEMENT */);
  for (let el = walker.nextNode() as Element | null; el; el = walker.nextNode() as Element | null) {
    const tag = el.localName;
    if (tag === 'h1' || tag === 'h2' || tag === 'h3') {
      const text = squash(el.textContent ?? '').toLowerCase();
      if (text.length > 0 && isTitle(text)) el.remove();
      return;
    }
    // Text before any heading: the heading that follows is not the title.
    if (tag === 'p' || tag === 'pre' || tag === 'ul' || tag === 'ol' || tag === 'table' || tag === 'blockquote') return;
  }
}

// Below this many characters a declared body is not trusted (an empty itemprop, a stub).
const MIN_DECLARED_CHARS = 140;
// How many characters of JSON-LD text may be scanned in all to find the paragraphs it holds.
const LOCATE_BUDGET_CHARS = 20_000_000;

/**
 * The element the page declares as its article body, if any: the one `itemprop="articleBody"`
 * with text (the longest when there are several), else the smallest element holding every
 * paragraph whose text JSON-LD's `articleBody` contains. The JSON-LD text itself is never used
 * as content: behind a paywall it holds what the page does not show.
 */
export function findDeclaredBody(body: Element, elements: Element[], ldBodies: string[]): Element | null {
  let best: Element | null = null;
  let bestChars = MIN_DECLARED_CHARS - 1;
  for (const el of elements) {
    if (el.getAttribute('itemprop')?.split(/\s+/).includes('articleBody')) {
      const chars = textLength(el);
      if (chars > bestChars) [best, bestChars] = [el, chars];
    }
  }
  if (best) return best;
  if (ldBodies.length === 0) return null;
  const declared = ldBodies.map(squash).filter((t) => t.length >= MIN_DECLARED_CHARS);
  if (declared.length === 0) return null;
  const held: Element[] = [];
  // Each probe scans the declared text: a bounded number of characters scanned in all, so that a
  // page of thousands of paragraphs under a huge declared text costs milliseconds, not seconds.
  const perProbe = declared.reduce((n, d) => n + d.length, 0);
  let budget = LOCATE_BUDGET_CHARS;
  for (const el of elements) {
    if (el.localName !== 'p') continue;
    if ((budget -= perProbe) < 0) break;
    const text = squash(el.textContent ?? '');
    if (text.length >= 30 && declared.some((d) => d.includes(text))) held.push(el);
  }
  if (held.length === 0) return null;
  const container = commonAncestor(held, body);
  return container && container !== body && textLength(container) >= MIN_DECLARED_CHARS ? container : null;
}

/** JSON-LD `articleBody` strings (in `@graph`s and arrays too) of the parsed JSON-LD `docs` (structured-data.ts parseLdScripts). */
export function readLdArticleBodies(docs: unknown[]): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.articleBody === 'string') out.push(o.articleBody);
    if (o['@graph'] !== undefined) visit(o['@graph'], depth + 1);
    if (o.mainEntity !== undefined) visit(o.mainEntity, depth + 1);
  };
  for (const doc of docs) visit(doc, 0);
  return out;
}

// Furniture by name: a class or id token (split on spaces) matching one of these words as a
// whole or as a hyphen/underscore-delimited part ("share-bar", "c-related__list", "commentlist"
// is not matched: only delimited words). Readability's own unlikely-candidate pattern covers
// part of this, but only for elements it has not yet scored and not when the token also reads
// "article", "content", "main" or "body" ("article-share", "content-related").
const wordsPattern = (words: string[]) => new RegExp(`(?:^|[-_])(?:${words.map((w) => w.replace(/-/g, '[-_]')).join('|')})(?:$|[-_])`, 'i');
const CONSENT_WORDS = ['cookie', 'cookies', 'consent', 'gdpr'];
// The conversation under an article (thread.ts reads a series of posts inside one of these as
// the article's comments, not as the page).
const COMMENT_WORDS = ['comments', 'comment-list', 'commentlist', 'comments-area', 'disqus', 'respond', 'responses'];
const FURNITURE_WORDS = [
  // sharing and following
  'share',
  'sharing',
  'sharedaddy',
  'social',
  'follow',
  // links to other pages
  'related',
  'relatedposts',
  'recommended',
  'recommendations',
  'trending',
  'popular',
  'most-read',
  'most-popular',
  'more-news',
  'more-stories',
  'more-on',
  'more-from',
  'read-more',
  'read-next',
  'also-like',
  'editors-picks',
  'breadcrumb',
  'breadcrumbs',
  'pagination',
  'pager',
  'post-navigation',
  'tags',
  'tag-list',
  'topics',
  // people and meta lines
  'byline',
  'author-bio',
  'author-box',
  'about-author',
  'entry-meta',
  'post-meta',
  'article-meta',
  'credit',
  'rating',
  'reviews',
  // selling and signing up
  'newsletter',
  'subscribe',
  'subscription',
  'signup',
  'promo',
  'affiliate',
  'sponsored',
  'advert',
  'advertisement',
  // consent
  ...CONSENT_WORDS,
  ...COMMENT_WORDS,
];
const FURNITURE = wordsPattern(FURNITURE_WORDS);
// "ad" only as part of a compound ("ad-slot", "top_ads"): alone, two letters are as likely one of
// the generated class names some sites put on every paragraph ("pw-post-body-paragraph ab ad fr").
const AD_PART = /^ads?[-_]|[-_]ads?(?:$|[-_])/i;
const CONSENT = wordsPattern(CONSENT_WORDS);
export const COMMENT_SECTION = wordsPattern(COMMENT_WORDS);
const DIALOG_ROLES = ['dialog', 'alertdialog'];
const FURNITURE_ROLES = new Set(['navigation', 'complementary', 'contentinfo', 'banner', ...DIALOG_ROLES, 'search']);
const FURNITURE_TAGS = new Set(['nav', 'footer', 'form', 'button', 'select', 'dialog']);
// Elements never removed by name: the page's structure and inline text.
const STRUCTURE = new Set([
  'html',
  'body',
  'main',
  'article',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'a',
  'b',
  'i',
  'em',
  'strong',
  'code',
  'pre',
  'li',
  'td',
  'th',
  'tr',
  'tbody',
  'table',
]);

/**
 * Removes the page's named furniture, except what holds the content: an element is kept when it
 * contains one of `keep` (the page's <h1>, <main>, a lone <article>, the declared body), so a
 * wrapper named "has-sidebar" or "share-enabled" around the whole story stays.
 */
export function removeNamedBoilerplate(elements: Element[], keep: Element[]): void {
  const holders = new Set<Element>();
  for (const el of keep) for (let a: Element | null = el; a && !holders.has(a); a = a.parentElement) holders.add(a);
  const story = new Set(proseHolders(elements).flatMap((el) => ancestry(el)));
  for (const el of elements) {
    const tag = el.localName;
    if (STRUCTURE.has(tag) || holders.has(el) || !el.parentNode) continue;
    if (FURNITURE_TAGS.has(tag)) el.remove();
    else if (el.hasAttributes() && isFurnitureByName(el) && !(story.has(el) && isNamedContent(el))) el.remove();
  }
}

/**
 * The part of named furniture the whole-page fallback removes too (report finding 17): consent
 * banners and dialogs, which a page with no article (a client-rendered shell, a login wall)
 * otherwise returned as its content. A wrapper holding the page's heading or main part is kept,
 * whatever it is named (a body-wide class such as "cookie-consent-shown").
 */
export function removeConsentDialogs(elements: Element[]): void {
  for (const el of elements) {
    if (!el.parentNode || STRUCTURE.has(el.localName)) continue;
    const role = el.getAttribute('role');
    const named =
      el.localName === 'dialog' ||
      (role !== null && DIALOG_ROLES.includes(role)) ||
      ['class', 'id'].some((a) => (el.getAttribute(a) ?? '').split(/\s+/).some((t) => t && CONSENT.test(t)));
    if (named && !el.querySelector('h1, main, article')) el.remove();
  }
}

function ancestry(el: Element): Element[] {
  const out: Element[] = [];
  for (let a: Element | null = el; a; a = a.parentElement) out.push(a);
  return out;
}

// A class or id token naming the element as the story's body ("article-body", "entry-content",
// "post_text", "story-body"), as Readability's okMaybeItsACandidate spares such elements from its
// unlikely-candidate removal. A token that is itself furniture ("article-share") does not count.
const CONTENT_NAME = /(?:^|[-_])(?:article|entry|post|story)[-_]?(?:body|content|text)(?:$|[-_])/i;

/**
 * Whether another of the element's class or id tokens names it as the story's body: a block
 * named "article-body pagination-first" or "entry-content entry-content-read-more" is the body,
 * paginated or expandable, when it also holds most of the page's prose (proseHolders).
 */
function isNamedContent(el: Element): boolean {
  for (const attr of ['class', 'id']) {
    for (const token of (el.getAttribute(attr) ?? '').split(/\s+/)) {
      if (token && CONTENT_NAME.test(token) && !FURNITURE.test(token) && !AD_PART.test(token)) return true;
    }
  }
  return false;
}

// An element holding at least this share of the page's paragraph prose holds the story.
const PROSE_HOLDER_SHARE = 0.5;

/**
 * The deepest elements each holding at least PROSE_HOLDER_SHARE of the page's paragraph prose
 * (the text of <p> elements outside links).
 */
export function proseHolders(elements: Element[]): Element[] {
  const prose = new Map<Element, number>();
  let total = 0;
  for (const el of elements) {
    if (el.localName !== 'p') continue;
    const chars = proseLength(el);
    if (chars === 0) continue;
    total += chars;
    for (let a = el.parentElement; a; a = a.parentElement) prose.set(a, (prose.get(a) ?? 0) + chars);
  }
  if (total === 0) return [];
  // The deepest qualifying elements: one whose qualifying child exists is not listed itself.
  const qualifying = [...prose].filter(([, n]) => n >= total * PROSE_HOLDER_SHARE).map(([el]) => el);
  const inner = new Set(qualifying);
  for (const el of qualifying) if (el.parentElement) inner.delete(el.parentElement);
  return [...inner];
}

/** Characters of an element's text outside links (spaces excluded). */
function proseLength(el: Element): number {
  let n = 0;
  for (let child = el.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 3) n += squashedLength((child as Text).data);
    else if (child.nodeType === 1 && (child as Element).localName !== 'a') n += proseLength(child as Element);
  }
  return n;
}

function isFurnitureByName(el: Element): boolean {
  const role = el.getAttribute('role');
  if (role && FURNITURE_ROLES.has(role)) return true;
  for (const attr of ['class', 'id']) {
    const v = el.getAttribute(attr);
    if (!v || (attr === 'id' && isHeadingAnchor(el, v))) continue;
    for (const token of v.split(/\s+/)) if (token && (FURNITURE.test(token) || AD_PART.test(token))) return true;
  }
  return false;
}

/**
 * Docs generators name a section after its heading (Sphinx's <section id="subscriptions"> around
 * "Subscriptions", MkDocs' anchors): such an id says what the section is about, not that it is
 * furniture.
 */
function isHeadingAnchor(el: Element, id: string): boolean {
  const first = el.firstElementChild;
  if (!first || !/^h[1-6]$/.test(first.localName)) return false;
  const slug = (first.textContent ?? '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '');
  return slug === id.toLowerCase().replace(/_/g, '-');
}

// Link density: blocks of Readability's pick whose text is mostly link text are navigation
// (related lists, breadcrumbs, tag lists, "Read more: ..." lines, reply links). Lists and
// containers go above LIST_LINK_SHARE, a paragraph above PARAGRAPH_LINK_SHARE (a sentence with a
// link or two is far below either).
const LIST_LINK_SHARE = 0.7;
const PARAGRAPH_LINK_SHARE = 0.8;
const DENSITY_TAGS = new Set(['ul', 'ol', 'dl', 'div', 'section', 'aside', 'nav', 'p', 'table', 'header', 'footer']);

/** Removes link-dense blocks from `root` (Readability's detached article), innermost first. */
export function removeLinkDenseBlocks(root: Element): void {
  // One walk, children before parents: text and link-text lengths and whether images or code
  // are inside (a figure or a code sample whose only text is a link is content).
  const visit = (el: Element): { text: number; link: number; media: boolean } => {
    let text = 0;
    let link = 0;
    let media = false;
    for (let child = el.firstChild; child; ) {
      const next = child.nextSibling;
      if (child.nodeType === 3) {
        // Trimmed, not squashed: the inner spaces count alike for link and other text, and a
        // native trim is far cheaper over a long article's every text node.
        text += (child as Text).data.trim().length;
      } else if (child.nodeType === 1) {
        const c = child as Element;
        const sub = visit(c);
        if (c.parentNode) {
          text += sub.text;
          link += c.localName === 'a' ? sub.text : sub.link;
          media ||= sub.media || MEDIA_TAGS.has(c.localName);
        }
      }
      child = next;
    }
    if (el !== root && text > 0 && !media && DENSITY_TAGS.has(el.localName)) {
      if (link / text > (el.localName === 'p' ? PARAGRAPH_LINK_SHARE : LIST_LINK_SHARE)) {
        el.remove();
        return { text: 0, link: 0, media: false };
      }
    }
    return { text, link, media };
  };
  visit(root);
}

// Duplicate blocks: the innermost blocks of the pick (no block inside them) are compared by their
// text, spaces squashed and case folded; below this many characters a repeat is a label ("Share",
// "Photo", a table's "Yes") and stays.
const MIN_DUPLICATE_CHARS = 30;
// Only a repeat within this many innermost blocks of the last occurrence goes: a gallery's or a
// lightbox's copy sits beside the original, while a structured page (a plan, a menu, a spec
// sheet) repeats a line in sections far apart, and there each copy belongs to its section.
const DUPLICATE_WINDOW = 12;
const BLOCK_TAGS = new Set(['p', 'li', 'dd', 'dt', 'figcaption', 'blockquote', 'pre', 'div', 'section', 'td', 'th', 'caption', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const HEADING_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * Removes from `root` (Readability's detached article) the innermost blocks whose text repeats
 * a block's a few blocks before (a caption printed again by a gallery or a lightbox, a pull quote, a
 * "continue reading" copy of the lede), and empties the alt of an image that repeats a block's
 * text or an earlier image's alt (the caption then says it once; turndown drops images without
 * alt). The first occurrence stays, so nothing the page says once is lost. A heading repeating a
 * heading goes only with nothing but headings between (a sticky header's copy): over a text of its
 * own it is that text's title, and posts may be titled alike on purpose (a column's weekly entry).
 */
export function removeDuplicateBlocks(root: Element): void {
  // Each text seen, with the index of the innermost block it was last seen in and whether that was a heading.
  const seen = new Map<string, { at: number; heading: boolean }>();
  let blocks = 0;
  // The index of the last innermost block that is not a heading.
  let lastText = -1;
  const images: Element[] = [];
  // Children before parents: whether a block is innermost is known when it is reached.
  const visit = (el: Element): boolean => {
    let hasBlock = false;
    for (let child = el.firstElementChild; child; ) {
      const next = child.nextElementSibling;
      if (child.localName === 'img') images.push(child);
      else hasBlock = visit(child) || hasBlock;
      child = next;
    }
    const isBlock = BLOCK_TAGS.has(el.localName);
    if (isBlock && !hasBlock && el !== root) {
      const text = squash(el.textContent ?? '').toLowerCase();
      const heading = HEADING_TAGS.has(el.localName);
      if (text.length >= MIN_DUPLICATE_CHARS) {
        const last = seen.get(text);
        const titlesItsOwn = heading && last?.heading && lastText > last.at;
        if (last !== undefined && blocks - last.at <= DUPLICATE_WINDOW && !titlesItsOwn) el.remove();
        else seen.set(text, { at: blocks, heading });
      }
      if (!heading && text) lastText = blocks;
      blocks++;
    }
    return isBlock || hasBlock;
  };
  visit(root);
  for (const img of images) {
    const alt = squash(img.getAttribute('alt') ?? '').toLowerCase();
    if (alt.length < MIN_DUPLICATE_CHARS) continue;
    if (seen.has(alt)) img.setAttribute('alt', '');
    else seen.set(alt, { at: blocks, heading: false });
  }
}

// Datelines: a block of at most DATELINE_MAX_TOKENS words, among the first or last
// DATELINE_EDGE blocks of the pick, holding a year or a clock time, whose words are all numbers,
// month and weekday names, time zones or the few words that introduce a date. The middle of the
// pick is left alone: a live blog's or a timeline's times are its structure.
const DATELINE_MAX_TOKENS = 16;
const DATELINE_EDGE = 3;
const DATE_WORDS = new Set(
  [
    // English months, days, and what goes around a date
    'january february march april may june july august september october november december',
    'jan feb mar apr jun jul aug sep sept oct nov dec',
    'monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun',
    'updated published posted last modified on at am pm a m p st nd rd th',
    'et pt ct mt est edt cst cdt mst mdt pst pdt gmt utc bst cet cest ist aest',
    // German, French, Spanish, Portuguese, Italian, Dutch
    'januar februar märz mai juni juli oktober dezember aktualisiert veröffentlicht am um uhr',
    'janvier février mars avril juin juillet août septembre octobre novembre décembre publié mis à jour le',
    'enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre publicado actualizado de las',
    'janeiro fevereiro março maio junho julho setembro outubro dezembro atualizado às segunda terça quarta quinta sexta sábado domingo feira',
    'gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre pubblicato aggiornato alle il',
    'januari februari maart mei augustus oktober gepubliceerd bijgewerkt op om',
  ]
    .join(' ')
    .split(' '),
);
const YEAR_OR_TIME = /(?:^|\D)(?:1[89]\d\d|20\d\d)(?:\D|$)|\d{1,2}[:.h]\d\d(?:\D|$)/;

/** Removes the date-only blocks at the edges of `root` (Readability's detached article). */
export function removeDatelines(root: Element): void {
  const blocks = innermostBlocks(root);
  const edges = blocks.length <= 2 * DATELINE_EDGE ? blocks : [...blocks.slice(0, DATELINE_EDGE), ...blocks.slice(-DATELINE_EDGE)];
  for (const el of edges) if (isDateline(el.textContent ?? '')) el.remove();
}

/** The innermost blocks of `root` holding text, in page order. */
function innermostBlocks(root: Element): Element[] {
  const blocks: Element[] = [];
  const visit = (el: Element): boolean => {
    let hasBlock = false;
    for (let child = el.firstElementChild; child; child = child.nextElementSibling) hasBlock = visit(child) || hasBlock;
    const isBlock = BLOCK_TAGS.has(el.localName);
    if (isBlock && !hasBlock && el !== root && squashedLength(el.textContent ?? '') > 0) blocks.push(el);
    return isBlock || hasBlock;
  };
  visit(root);
  return blocks;
}

// Edge boilerplate: furniture a page names nothing (plain <div>s, no class or id) that Readability
// kept beside the text, recognised by where it is and what it is made of. Among the first and
// last EDGE_BLOCKS innermost blocks of the pick: a trail of links with only separators between
// them (a breadcrumb "You are here: Home > News", a bar "Home | Routes | Fares", "Share: Facebook
// X Email"); and among the last, a short legal line (a copyright sign or "all rights reserved").
// A list of references keeps its items: each has text of its own between and around its links.
const EDGE_BLOCKS = 3;
const TRAIL_MAX_CHARS = 200;
// Between two links of a trail: separators only.
const TRAIL_GAP = /^[\s>›»<‹«/\\|·•→←:;,\-–—]*$/;
// Before the first link a short label ("You are here:", "Share this page:"), after the last the current page's name.
const TRAIL_LABEL_CHARS = 40;
const LEGAL_MAX_CHARS = 400;
const LEGAL = /©|\(c\)\s*(?:19|20)\d\d|\ball rights reserved\b|\btous droits réservés\b|\balle rechte vorbehalten\b|\btodos los derechos reservados\b/i;

/** Removes link trails at both edges of `root` (Readability's detached article) and legal lines at its end. */
export function removeEdgeBoilerplate(root: Element): void {
  const blocks = innermostBlocks(root);
  const head = blocks.slice(0, EDGE_BLOCKS);
  const tail = blocks.length > EDGE_BLOCKS ? blocks.slice(-EDGE_BLOCKS) : [];
  for (const el of head) if (isLinkTrail(el)) el.remove();
  for (const el of tail) if (el.parentNode && (isLinkTrail(el) || isLegalLine(el))) el.remove();
}

function isLinkTrail(el: Element): boolean {
  const text = squash(el.textContent ?? '');
  if (text.length > TRAIL_MAX_CHARS) return false;
  // The block's text as runs between links: [before, gap, gap, ..., after].
  const runs: string[] = [''];
  let links = 0;
  const walk = (node: Element) => {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) runs[runs.length - 1] += (c as Text).data;
      else if (c.nodeType === 1) {
        if ((c as Element).localName === 'a') {
          links++;
          runs.push('');
        } else walk(c as Element);
      }
    }
  };
  walk(el);
  if (links < 2) return false;
  const before = runs[0]!.trim();
  const after = runs[runs.length - 1]!.trim();
  const gaps = runs.slice(1, -1);
  return (
    gaps.every((g) => TRAIL_GAP.test(g)) &&
    before.length <= TRAIL_LABEL_CHARS &&
    (!before || /[:>›»|]$/.test(before)) &&
    after.replace(/^[\s>›»/|·•-]+/, '').length <= TRAIL_LABEL_CHARS
  );
}

function isLegalLine(el: Element): boolean {
  const text = squash(el.textContent ?? '');
  return text.length <= LEGAL_MAX_CHARS && LEGAL.test(text);
}

export function isDateline(text: string): boolean {
  if (!YEAR_OR_TIME.test(text)) return false;
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0 || words.length > DATELINE_MAX_TOKENS) return false;
  return words.every((w) => DATE_WORDS.has(w) || /^\d+(?:st|nd|rd|th|h|am|pm)?$|^\d{1,2}h\d\d$/.test(w));
}

// A slideshow's position: "1 of 5", "Image 3 of 12", "Foto 2 von 8", "Photo 2 / 8" (a slash only
// after a label, so a fraction such as "1/2" in a recipe stays).
const COUNTER = /^(?:(?:\p{L}+\s+)?\d{1,3}\s*(?:of|von|de|sur|di|van|из)\s*\/?\s*\d{1,3}|\p{L}+\s+\d{1,3}\s*\/\s*\d{1,3})$/iu;
const COUNTER_MAX_CHARS = 24;

// A vote count's element, by its class or id (Stack Exchange's js-vote-count, a forum's votes,
// upvotes, karma, likes). Not "score" or "points": a match report's score is content.
const VOTE_NAME = /(?:^|[\s_-])(?:votes?|vote-?count|upvotes?|downvotes?|votecell|karma|likes?|like-?count)(?:$|[\s_-])/i;
// What a vote count reads: a bare number, signed or abbreviated (−3, 1.2k, 12,345).
const VOTE_COUNT = /^[+\-\u2212]?\d[\d.,]*\s*[kKmM]?$/;

/**
 * Removes vote counts (a Q&A page's "17" above each answer): elements named for votes whose whole
 * text is a bare number. On the page before Readability, which drops the class names that say so.
 */
export function removeVoteCounts(all: readonly Element[]): void {
  for (const el of all) {
    if (!el.hasAttributes() || !el.parentNode) continue;
    const name = `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`;
    if (name.length < 4 || !VOTE_NAME.test(name)) continue;
    const text = squash(el.textContent ?? '');
    if (text.length <= COUNTER_MAX_CHARS && VOTE_COUNT.test(text)) el.remove();
  }
}

/** Removes gallery counters from `root` (Readability's detached article): the largest element whose whole text is one. */
export function removeCounters(root: Element): void {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, 4 /* SHOW_TEXT */);
  const hits: Element[] = [];
  for (let t = walker.nextNode() as Text | null; t; t = walker.nextNode() as Text | null) {
    if (!/\d/.test(t.data)) continue;
    let found: Element | null = null;
    for (let a = t.parentElement; a && a !== root; a = a.parentElement) {
      const text = squash(a.textContent ?? '');
      if (text.length > COUNTER_MAX_CHARS) break;
      if (COUNTER.test(text)) found = a;
    }
    if (found) hits.push(found);
  }
  for (const el of hits) el.remove();
}

const MEDIA_TAGS = new Set(['img', 'picture', 'video', 'audio', 'pre', 'code', 'math', 'svg']);

function commonAncestor(els: Element[], stop: Element): Element | null {
  const chain: Element[] = [];
  for (let a: Element | null = els[0]!; a; a = a.parentElement) chain.push(a);
  let best = 0;
  for (const el of els.slice(1)) {
    const seen = new Set<Element>();
    for (let a: Element | null = el; a; a = a.parentElement) seen.add(a);
    while (best < chain.length && !seen.has(chain[best]!)) best++;
  }
  const found = chain[best] ?? null;
  return found && (found === stop || stop.contains(found)) ? found : null;
}

// Post meta: the lines a Q&A page, a forum or a blog puts around each post (when it was asked,
// answered, modified, how often viewed, a permalink) in whatever language the site speaks. They
// are known by their markup, as a reader's eye knows them by their small grey type: a <time>, or
// an ISO timestamp in a `datetime` or `title` (the exact date a relative "2 years ago" hovers
// with), or a class/id naming the block meta or stats; and by their shape: a line of at most
// META_MAX_WORDS words with no sentence in it. A marked element is widened to the largest such
// line around it (a row of "asked", "modified", "viewed" items); the line must be a block of its
// own, so a date inside a sentence stays, and lists and tables are never widened into (a
// changelog's dates, a table's date column are content), it must say something beside its dates
// (a live blog's bare "15:31" over an entry is the page's structure), and its dates must not all
// be still to come (an event's "Doors open 4 May, 19:00", a deadline: announcements, not records).
// Short, dated and named stats is also a sports page's "Goals: 12 · 3 May 2024": a line goes only
// where furniture stands (isPostFurniture): in a post's header or footer, in a box named meta or
// byline, beside the title, or when it is dates and a few words of label or name, no figure.
const META_NAME = wordsPattern(['meta', 'metadata', 'stats', 'statistics']);
const META_HINT = /meta|stat/i;
const FURNITURE_META_NAME = wordsPattern(['meta', 'metadata', 'byline', 'dateline']);
const FURNITURE_META_TAGS = new Set(['header', 'footer']);
// How far up a line's box is looked for the header or footer it sits in: a post header's meta row
// is wrapped in a row and an item or two, not more.
const FURNITURE_MAX_DEPTH = 3;
// A label and a name beside the dates ("Posted by Ana Costa on", "respondida", "compartilhar").
const LABEL_MAX_WORDS = 6;
const META_MAX_CHARS = 120;
const META_MAX_WORDS = 14;
const ISO_TIMESTAMP = /(?:^|\D)(?:19|20)\d\d-[01]\d-[0-3]\d(?:$|[T\s])/;
// A sentence's end inside or at the end of the line: prose, not a meta line ("48.5k" has no space after its point).
const SENTENCE_END = /[.!?。！？](?:\s|$)/;
const NOT_A_LINE = new Set(['li', 'dd', 'dt', 'td', 'th', 'caption', 'figcaption', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'table', 'ul', 'ol', 'dl']);

/**
 * Removes the post meta lines among `all` (the page's elements, before Readability scores: inside
 * its pick a meta line's name is gone, its <div> unwrapped into a bare <p>).
 */
export function removePostMeta(all: readonly Element[], now = Date.now()): void {
  const hits = new Set<Element>();
  for (const el of all) {
    if (!el.hasAttributes() && el.localName !== 'time') continue;
    if (isTimeMarker(el)) {
      let line: Element | null = null;
      for (let a: Element | null = el; a && a.localName !== 'body' && !NOT_A_LINE.has(a.localName) && isMetaLine(a); a = a.parentElement) line = a;
      if (!line || !BLOCK_TAGS.has(line.localName) || announcesFuture(line, now)) continue;
      const label = textBesideTimes(line);
      if (/[\p{L}\p{N}]/u.test(label) && (isPostFurniture(line) || isDateLabel(label))) hits.add(line);
    } else if (BLOCK_TAGS.has(el.localName) && !NOT_A_LINE.has(el.localName) && isNamedMeta(el) && isMetaLine(el) && /\d/.test(el.textContent ?? '') && isPostFurniture(el)) {
      hits.add(el);
    }
  }
  for (const el of hits) el.remove();
}

/**
 * The line's text outside its time markers: what it says beside its dates ("asked", "Perguntada",
 * "viewed 48k times"). None: a bare timestamp heading an entry (a live blog's "15:31"), the page's
 * structure, not meta.
 */
function textBesideTimes(line: Element): string {
  let text = '';
  const walker = line.ownerDocument.createTreeWalker(line, 4 /* SHOW_TEXT */);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!/[\p{L}\p{N}]/u.test((t as Text).data)) continue;
    let marked = false;
    for (let a = t.parentElement; a && !marked; a = a === line ? null : a.parentElement) marked = isTimeMarker(a);
    if (!marked) text += ` ${(t as Text).data}`;
  }
  return squash(text);
}

/** Dates with a label or a name beside them and no figure of their own ("Posted by Ana Costa", not "Goals: 12"). */
function isDateLabel(label: string): boolean {
  return !/\d/.test(label) && label.split(' ').filter((w) => /[\p{L}]/u.test(w)).length <= LABEL_MAX_WORDS;
}

/**
 * Whether a meta-shaped line stands where post furniture does: in a <header> or <footer>, or a
 * box named meta, byline or dateline (itself or one of its few nearest boxes), or beside the
 * title (an <h1>, or a box holding only the <h1>).
 */
function isPostFurniture(line: Element): boolean {
  let box: Element | null = line;
  for (let depth = 0; box && depth <= FURNITURE_MAX_DEPTH && box.localName !== 'body'; depth++, box = box.parentElement) {
    if (FURNITURE_META_TAGS.has(box.localName)) return true;
    const name = `${box.getAttributeNode('class')?.value ?? ''} ${box.getAttributeNode('id')?.value ?? ''}`;
    if (META_HINT.test(name) || /byline|dateline/i.test(name)) {
      if (name.split(/\s+/).some((token) => token && FURNITURE_META_NAME.test(token))) return true;
    }
  }
  return isTitle(line.previousElementSibling) || isTitle(line.nextElementSibling);
}

function isTitle(el: Element | null): boolean {
  if (!el) return false;
  if (el.localName === 'h1') return true;
  const h1 = el.getElementsByTagName('h1')[0];
  return !!h1 && squashedLength(h1.textContent ?? '') === textLength(el);
}

/**
 * Whether a line's timestamps are all still to come: an event's date, a deadline, a sale's end
 * announce something; a post's meta records what was done (asked, answered, modified), so its
 * times are past.
 */
function announcesFuture(line: Element, now: number): boolean {
  const stamps = [line, ...Array.from(line.querySelectorAll('time, [datetime], [title]'))]
    .map((el) => ISO_TIMESTAMP.exec(el.getAttributeNode('datetime')?.value ?? el.getAttributeNode('title')?.value ?? '')?.[0])
    .filter((stamp): stamp is string => !!stamp)
    .map((stamp) => Date.parse(stamp.replace(/^\D/, '').trim().slice(0, 10)));
  return stamps.length > 0 && stamps.every((t) => t > now);
}

function isTimeMarker(el: Element): boolean {
  if (el.localName === 'time') return true;
  // Attribute values from their nodes: linkedom's getAttribute('class') rebuilds a token list.
  const stamp = el.getAttributeNode('datetime')?.value ?? el.getAttributeNode('title')?.value;
  return !!stamp && ISO_TIMESTAMP.test(stamp);
}

function isNamedMeta(el: Element): boolean {
  const name = `${el.getAttributeNode('class')?.value ?? ''} ${el.getAttributeNode('id')?.value ?? ''}`;
  // The substring first: most names on a page hold neither, and the token split is what costs.
  return META_HINT.test(name) && name.split(/\s+/).some((token) => token && META_NAME.test(token));
}

// What a meta line never holds: media, code, tables, lists, headings.
const NOT_IN_A_LINE = new Set(['img', 'picture', 'video', 'pre', 'table', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * A short line of words with no sentence in it and nothing but text. The text is read a node at
 * a time and given up on past META_MAX_CHARS: the first ancestor too long to be a line may be
 * the whole page, and its textContent would be built for nothing.
 */
function isMetaLine(el: Element): boolean {
  let text = '';
  const walker = el.ownerDocument.createTreeWalker(el, 1 /* SHOW_ELEMENT */ | 4 /* SHOW_TEXT */);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeType === 1) {
      if (NOT_IN_A_LINE.has((n as Element).localName)) return false;
      continue;
    }
    text += (n as Text).data;
    // Squashed only when the raw text passes the bound: once per META_MAX_CHARS read at most.
    if (text.length > META_MAX_CHARS) {
      text = `${squash(text)} `;
      if (text.length > META_MAX_CHARS + 1) return false;
    }
  }
  text = squash(text);
  return !!text && text.length <= META_MAX_CHARS && text.split(' ').length <= META_MAX_WORDS && !SENTENCE_END.test(text);
}

function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function squashedLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c === 32 || (c >= 9 && c <= 13))) n++;
  }
  return n;
}

/** An element's text length, whitespace left out. */
export function textLength(el: Element): number {
  return squashedLength(el.textContent ?? '');
}
