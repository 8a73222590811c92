// Threads: a forum topic, a Q&A page, an issue with its comments, a link aggregator's discussion.
// Readability keeps one block of a page, so on a thread it kept one post (or the first few
// replies without the question). A thread is read here as what it is: a series of posts that
// share their markup, each with an author, in page order. Found by structure, not by site: the
// posts are the elements carrying one class token (or one schema.org type) that repeat, each
// holding prose and an author marker (a class, itemprop or rel naming the author, or a link to a
// user's profile), the way Discourse, phpBB, Stack Exchange, GitHub, Hacker News and Reddit all
// mark a post, each with its own names. What is not the post's text (votes, share and reply
// links, avatars, signatures, "Joined: 2021") is left behind by keeping each post's body only:
// the deepest element holding nearly all of its prose.

import { COMMENT_SECTION } from './content-rules.js';

export interface ThreadPost {
  author: string | null;
  date: string | null;
  /** The post's own title (a review's "Warm without being sweaty"), outside its body. */
  title: string | null;
  /** 0 for a post, 1 for a reply to it, and so on (by nesting, or by the depth the page states). */
  depth: number;
  body: Element;
}

export interface Thread {
  /** The text the discussion is about when it sits outside the posts (a link aggregator's submission text). */
  opening: { author: string | null; date: string | null; blocks: Element[] } | null;
  posts: ThreadPost[];
}

// A class token, itemprop or rel naming the element as (part of) a post's author.
// Tested on the whole class attribute. "user" only at a token's end ("comment-user", "c-user"):
// at its start it is as often a layout's ("user-select-none").
const AUTHOR_CLASS = /(?:^|[\s_-])(?:author|username|user-?name|poster|hnuser|commenter|creator)(?:$|[\s_-])|(?:^|[\s_-])user(?:$|\s)|(?:^|\s)(?:fn|names)(?:$|\s)/i;
// The same word in a CSS module's camel-case names (React builds: "ActivityHeader-module__AuthorLink--D7Ojk",
// "IssueBodyHeaderAuthor-module__authorLoginLink--VxT3S"), case-sensitive: "Author" as a word of its own.
const AUTHOR_CAMEL_CLASS = /(?:^|[\s_-]|[a-z])Author(?:[A-Z][a-z]+)?(?:$|[\s_-])|(?:^|[\s_-])author(?:Login|Name|Link)/;
// A test id naming the element as the author (React apps keep data-testid in production: "issue-body-header-author").
const AUTHOR_TEST_ID = /(?:^|[-_])author(?:$|[-_])/i;
// A link to a user's profile: /u/name, /user/name, /users/1/name, /members/..., ?id= on a user
// page, memberlist.php?mode=viewprofile, /@name.
const PROFILE_HREF = /(?:^|\/|\.\/)(?:u|user|users|member|members|profile|profiles|people|memberlist\.php)(?:\/|\?|$)|(?:^|\/)@[\w.-]+\/?$|[?&]mode=viewprofile/i;
const DATE_CLASS = /(?:^|[-_])(?:date|time|timestamp|age|posted|relativetime)(?:$|[-_])/i;
// A date written relative to now: its absolute form (datetime, title) is more use to a reader later.
const RELATIVE_DATE = /\bago\b|^just now$|^yesterday|^\d+\s*[smhdwy]$/i;
// Where a post can never be: the page's chrome.
const CHROME = new Set(['nav', 'aside', 'header', 'footer', 'form', 'script', 'style', 'template', 'noscript']);
const CHROME_ROLES = new Set(['navigation', 'complementary', 'banner', 'contentinfo', 'search']);
// A text node this long is prose wherever it is; shorter ones count inside paragraph-like blocks.
const PROSE_RUN_CHARS = 25;
const PROSE_PARENTS = new Set(['p', 'pre', 'code', 'blockquote', 'li', 'dd']);
// At least this many posts, and this much prose in all, make a thread.
const MIN_POSTS = 2;
const MIN_THREAD_CHARS = 140;
// A post's body: the deepest element holding this share of the post's prose.
const BODY_SHARE = 0.7;
// Among series holding about the same prose, the outermost wins (the whole post, not its text cell).
const SAME_SCORE = 0.97;
// Opening text outside the posts: blocks with at least this much prose, together this much.
const OPENING_BLOCK_CHARS = 30;
const OPENING_CHARS = 80;
// How many containers out from the posts' own the opening is looked for (Hacker News: two).
const OPENING_LEVELS = 3;
const MAX_AUTHOR_CHARS = 80;
const MAX_DATE_CHARS = 60;
const MAX_LINE_CHARS = 160;
// A date in running text: "Tue Mar 12, 2024 8:15 am", "12 March 2024, 08:30", "2024-03-12 08:30".
const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?';
const CLOCK = '(?:,?\\s*(?:at\\s+)?\\d{1,2}:\\d\\d(?:\\s?[ap]\\.?m\\.?)?)?';
const DATE_TEXT = new RegExp(
  `(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\\s+)?(?:${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}|\\d{1,2}\\.?\\s+${MONTH}\\s+\\d{4})${CLOCK}|\\d{4}-\\d\\d-\\d\\d(?:[T ]\\d\\d:\\d\\d)?`,
  'i',
);

interface Series {
  members: Element[];
  /** Prose of the members, each reply counted once. */
  score: number;
  /** Members holding prose. */
  posts: number;
  depth: number;
}

interface Tally {
  /** Prose characters in the subtree (text outside links, see PROSE_RUN_CHARS). */
  prose: number;
  /** Author markers in the subtree. */
  authors: number;
  /** Headings in the subtree that are a link to another page: a teaser card, not a post. */
  teaserHeadings: number;
  /** The element's place in page order. */
  order: number;
  /** Inside the page's chrome (nav, aside, header, footer, form; a navigation or complementary role). */
  chrome: boolean;
  /** Inside a link. */
  link: boolean;
}

// What an author marker looks like in the markup (a superset of isAuthorMarker, read on the raw
// HTML): a page with fewer than two has no thread, and is spared the walk (most pages).
const AUTHOR_HINT =
  /\s(?:data-)?author\s*=\s*["']?[^\s"'>]|\bdata-testid\s*=\s*["']?[^"'>]*author|\b(?:itemprop|rel)\s*=\s*["']?[^"'>]*\b(?:author|creator)|\bclass\s*=\s*["']?[^"'>]*(?:author|user|poster|commenter|creator|\bfn\b|\bnames\b)|\bhref\s*=\s*["']?[^"'>]*(?:\/u\/|\/users?\b|\/members?\b|\/profiles?\b|\/people\b|viewprofile|\/@)/gi;

/** Whether `html` has the author markers a thread needs (cheap: one scan of the text). */
export function mayHoldThread(html: string): boolean {
  AUTHOR_HINT.lastIndex = 0;
  let seen = 0;
  while (AUTHOR_HINT.exec(html)) if (++seen >= MIN_POSTS) return true;
  return false;
}

/**
 * The thread on the page, or null when the page is not one: no series of at least two authored
 * posts, a series inside a section named as an article's comments (a blog post's comments are
 * not what the reader came for), or more prose outside the posts than in them.
 */
export function readThread(body: Element): Thread | null {
  const tallies = new Map<Element, Tally>();
  const groups = new Map<string, Element[]>();
  let markers = 0;
  // One walk in page order (linkedom's tree walker is one pass over its node list, its child and
  // sibling getters are not), then the elements in reverse, each adding its counts to its parent's:
  // children before parents.
  const elements: Element[] = [body];
  const walker = body.ownerDocument.createTreeWalker(body, 1 /* SHOW_ELEMENT */ | 4 /* SHOW_TEXT */);
  tallies.set(body, { prose: 0, authors: 0, teaserHeadings: 0, order: 0, chrome: false, link: false });
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentNode as Element;
    const up = tallies.get(parent);
    if (!up) continue;
    if (node.nodeType === 3) {
      if (up.link) continue;
      const n = (node as Text).data.trim().length;
      if (n >= PROSE_RUN_CHARS || (n > 0 && PROSE_PARENTS.has(parent.localName))) up.prose += n;
      continue;
    }
    const el = node as Element;
    const tag = el.localName;
    const chrome = up.chrome || CHROME.has(tag) || (el.hasAttributes() && CHROME_ROLES.has(el.getAttribute('role') ?? ''));
    tallies.set(el, { prose: 0, authors: 0, teaserHeadings: 0, order: elements.length, chrome, link: up.link || tag === 'a' });
    elements.push(el);
  }
  for (let i = elements.length - 1; i >= 0; i--) {
    const el = elements[i]!;
    const tally = tallies.get(el)!;
    // Attributes read once, and only where there are any; the class from its attribute node
    // (linkedom's getAttribute('class') builds a token list and joins it again on every read).
    if (el.hasAttributes()) {
      const cls = el.getAttributeNode('class')?.value ?? null;
      // A forum signature is the same under every post of its author: not the post's text.
      if (cls && SIGNATURE_CLASS.test(cls)) tally.prose = 0;
      if (isAuthorMarker(el, cls)) {
        tally.authors++;
        markers++;
      }
      // Only what could be a post is grouped: it holds prose and an author.
      if (!tally.chrome && tally.authors > 0 && tally.prose > 0) for (const key of groupKeys(el, cls)) (groups.get(key) ?? groups.set(key, []).get(key)!).push(el);
    }
    const tag = el.localName;
    // A heading inside a link (a card whose whole face links on) or holding only a link elsewhere: a teaser.
    if (tag.length === 2 && tag[0] === 'h' && tag[1]! >= '1' && tag[1]! <= '6' && (tally.link || isTeaserHeading(el))) tally.teaserHeadings++;
    if (el === body) break;
    const parent = tallies.get(el.parentNode as Element)!;
    parent.prose += tally.prose;
    parent.authors += tally.authors;
    parent.teaserHeadings += tally.teaserHeadings;
  }
  if (markers < MIN_POSTS) return null;

  // The series: members not inside one another count once (a nested reply is inside its parent),
  // and at least two must stand side by side (a wrapper repeated around the whole page is not one).
  const candidates: Series[] = [];
  for (const found of groups.values()) {
    if (found.length < MIN_POSTS) continue;
    if (found.some((m) => tallies.get(m)!.teaserHeadings > 0)) continue;
    // Grouped children first: back to page order (a reply after its parent).
    const members = found.sort((a, b) => tallies.get(a)!.order - tallies.get(b)!.order);
    const set = new Set(members);
    const top = members.filter((m) => !hasAncestorIn(m, set));
    if (top.length < MIN_POSTS) continue;
    const score = top.reduce((n, m) => n + tallies.get(m)!.prose, 0);
    if (score >= MIN_THREAD_CHARS) candidates.push({ members, score, posts: members.length, depth: depthOf(members[0]!) });
  }
  if (candidates.length === 0) return null;
  const most = Math.max(...candidates.map((c) => c.score));
  // Of the series holding about the same prose, the one with the most posts (a series of
  // listings wraps several posts each), then the outermost (the whole post, not its text cell).
  const best = candidates.filter((c) => c.score >= most * SAME_SCORE).sort((a, b) => b.posts - a.posts || a.depth - b.depth)[0]!;
  const members = best.members;
  const set = new Set(members);

  // A blog post's or a news story's comments: the article is the page, not its comments.
  for (let a = members[0]!.parentElement; a && a !== body; a = a.parentElement) if (isCommentSection(a)) return null;
  // More prose outside the posts than in them: the posts are beside the page's text, not it.
  // Unless what is outside is the thread's opening post in markup of its own (an issue's text
  // above its comments, under its author and date, GitHub's React view): then it is weighed
  // with the posts. An opening that outweighs all the posts is an article with its replies.
  const outside = tallies.get(body)!.prose - best.score;
  const openingPost = outside > best.score ? openingOf(body, members, set, tallies) : null;
  const openingChars = openingPost?.author && openingPost.date ? openingPost.blocks.reduce((n, b) => n + tallies.get(b)!.prose, 0) : 0;
  const asPost = openingChars <= best.score ? openingChars : 0;
  if (outside - asPost > best.score + asPost) return null;

  const posts: ThreadPost[] = [];
  const postMembers: Element[] = [];
  for (const member of members) {
    let nesting = 0;
    for (let a = member.parentElement; a; a = a.parentElement) if (set.has(a)) nesting++;
    const own = tallies.get(member)!.prose - nestedProse(member, set, tallies);
    if (own <= 0) continue;
    const bodyEl = postBody(member, set, tallies, own);
    postMembers.push(member);
    posts.push({
      author: authorOf(member, bodyEl, set),
      date: dateOf(member, bodyEl, set),
      title: titleOf(member, bodyEl, set),
      depth: Math.max(nesting, statedDepth(member, bodyEl)),
      body: bodyEl,
    });
  }
  if (posts.length < MIN_POSTS) return null;
  dropRepeatedTitles(posts, squash(body.ownerDocument.querySelector('title')?.textContent ?? '').toLowerCase());
  return { opening: openingOf(body, postMembers, set, tallies), posts };
}

/** The keys an element is grouped by: its tag with each class token (digits make a token an id), and its schema.org type. */
function groupKeys(el: Element, cls: string | null): string[] {
  const keys: string[] = [];
  if (cls) for (const token of cls.split(/\s+/)) if (token.length > 1 && !/\d/.test(token)) keys.push(`${el.localName}.${token}`);
  // A custom element is its own kind of post (new Reddit's <shreddit-comment>).
  if (el.localName.includes('-')) keys.push(`tag:${el.localName}`);
  const type = el.getAttribute('itemtype');
  if (type) keys.push(`type:${type.replace(/^https?:\/\/schema\.org\//i, '').toLowerCase()}`);
  return keys;
}

const SIGNATURE_CLASS = /(?:^|[\s_-])signature(?:$|[\s_-])/i;

function isAuthorMarker(el: Element, cls = el.getAttribute('class')): boolean {
  if ((el.getAttribute('itemprop') ?? '').split(/\s+/).some((p) => p === 'author' || p === 'creator')) return true;
  if (el.getAttribute('rel')?.split(/\s+/).includes('author')) return true;
  if (namedAuthor(el)) return true;
  if (cls && (AUTHOR_CLASS.test(cls) || AUTHOR_CAMEL_CLASS.test(cls))) return true;
  if (AUTHOR_TEST_ID.test(el.getAttribute('data-testid') ?? '')) return true;
  return el.localName === 'a' && PROFILE_HREF.test(el.getAttribute('href') ?? '');
}

/** A heading that is a link elsewhere: a card's title ("#" links are a post's own permalink). */
function isTeaserHeading(heading: Element): boolean {
  // The heading's only element, at any depth, is a link (no querySelector: it compiles per call).
  let link: Element | null = heading.firstElementChild;
  while (link && link.localName !== 'a' && link.firstElementChild === link.lastElementChild) link = link.firstElementChild;
  if (!link || link.localName !== 'a') return false;
  const href = (link.getAttribute('href') ?? '').trim();
  if (!href || href.includes('#')) return false;
  return (link.textContent ?? '').trim().length >= (heading.textContent ?? '').trim().length * 0.9;
}

export function isCommentSection(el: Element): boolean {
  for (const attr of ['class', 'id']) for (const token of (el.getAttribute(attr) ?? '').split(/\s+/)) if (token && COMMENT_SECTION.test(token)) return true;
  return false;
}

function hasAncestorIn(el: Element, set: Set<Element>): boolean {
  for (let a = el.parentElement; a; a = a.parentElement) if (set.has(a)) return true;
  return false;
}

function depthOf(el: Element): number {
  let n = 0;
  for (let a = el.parentElement; a; a = a.parentElement) n++;
  return n;
}

/** Prose of the members nested in `member` (the replies under it). */
function nestedProse(member: Element, set: Set<Element>, tallies: Map<Element, Tally>): number {
  let n = 0;
  const walk = (el: Element) => {
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      if (set.has(c)) n += tallies.get(c)!.prose;
      else walk(c);
    }
  };
  walk(member);
  return n;
}

const CONTENT_BLOCKS = new Set(['p', 'pre', 'blockquote', 'ul', 'ol', 'li', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** The deepest element of `member` (replies aside) holding BODY_SHARE of its own prose. */
function postBody(member: Element, set: Set<Element>, tallies: Map<Element, Tally>, own: number): Element {
  let at = member;
  for (;;) {
    let next: Element | null = null;
    for (let c = at.firstElementChild; c; c = c.nextElementSibling) {
      // A body is a container: one paragraph of it is not the whole post (code and headings beside).
      // (Tables are not in the list: on forums they are layout far more often than data.)
      if (set.has(c) || CONTENT_BLOCKS.has(c.localName)) continue;
      const prose = tallies.get(c)!.prose - nestedProse(c, set, tallies);
      if (prose >= own * BODY_SHARE) next = c;
    }
    if (!next) return at;
    at = next;
  }
}

/** The first of `member`'s elements outside its body and its replies matching `test`, in page order. */
function findOutside(member: Element, bodyEl: Element, set: Set<Element>, test: (el: Element) => boolean): Element | null {
  const walk = (el: Element): Element | null => {
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
      if (c === bodyEl || set.has(c)) continue;
      if (test(c)) return c;
      const found = walk(c);
      if (found) return found;
    }
    return null;
  };
  return walk(member);
}

/** An author the element names in an attribute (<shreddit-comment author="…">, old Reddit's data-author). */
function namedAuthor(el: Element): string | null {
  const name = (el.getAttribute('author') ?? el.getAttribute('data-author'))?.trim();
  return name && name.length <= MAX_AUTHOR_CHARS ? name : null;
}

/** The name an author marker gives: its attribute, its itemprop=name, its link's text, or its text. */
function markerName(marker: Element): string | null {
  const named = namedAuthor(marker);
  if (named) return named;
  // A wrapper named for the author around the name and a badge ("Verified buyer"): the name's own marker.
  for (let inner = marker.firstElementChild; inner; inner = inner.nextElementSibling) if (isAuthorMarker(inner) && squash(inner.textContent ?? '')) return markerName(inner);
  const holder = marker.querySelector('[itemprop~="name"]') ?? (marker.localName === 'a' ? marker : (marker.querySelector('a[href]') ?? marker));
  const name = squash(holder.textContent ?? '');
  return name && name.length <= MAX_AUTHOR_CHARS ? name : null;
}

function authorOf(member: Element, bodyEl: Element, set: Set<Element>): string | null {
  const named = namedAuthor(member);
  if (named) return named;
  const marker = findOutside(member, bodyEl, set, (c) => isAuthorMarker(c) && !c.contains(bodyEl) && squash(c.textContent ?? '') !== '');
  return marker ? markerName(marker) : null;
}

function dateOf(member: Element, bodyEl: Element, set: Set<Element>): string | null {
  const el = findOutside(member, bodyEl, set, isDateElement);
  if (!el) {
    // No element for it: a date written in the author's line ("by frank_h » Tue Mar 12, 2024 8:15 am").
    let found: string | null = null;
    findOutside(member, bodyEl, set, (c) => {
      if (!isAuthorMarker(c) || c.contains(bodyEl)) return false;
      for (const line of [c, c.parentElement]) {
        if (!line || line.contains(bodyEl)) continue;
        const text = squash(line.textContent ?? '');
        found = text.length <= MAX_LINE_CHARS ? (DATE_TEXT.exec(text)?.[0] ?? null) : null;
        if (found) return true;
      }
      return false;
    });
    return found;
  }
  return dateText(el);
}

/** A date element's text, its absolute form (datetime, title) when the text is relative or empty. */
function dateText(el: Element): string | null {
  const text = squash(el.textContent ?? '');
  const stamp = el.getAttribute('datetime') ?? el.getAttribute('title') ?? '';
  const absolute = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d/.test(stamp) ? stamp.slice(0, 16).replace('T', ' ') : null;
  const date = (!text || RELATIVE_DATE.test(text)) && absolute ? absolute : text;
  return date && date.length <= MAX_DATE_CHARS ? date : null;
}

function isDateElement(c: Element): boolean {
  return (
    c.localName === 'time' ||
    c.localName === 'relative-time' ||
    ((c.getAttribute('class') ?? '').split(/\s+/).some((t) => DATE_CLASS.test(t)) && !c.querySelector('time, relative-time'))
  );
}

// A post's title: a heading, or an element a class token, itemprop or data-hook names a title
// ("review-title", Judge.me's "jdgm-rev__title", Amazon's data-hook="review-title", schema.org's
// headline), outside the post's body and holding neither its author nor its date.
const TITLE_NAME = /(?:^|[-_])(?:title|headline|subject)(?:$|[-_])/i;
const MAX_TITLE_CHARS = 150;

function titleOf(member: Element, bodyEl: Element, set: Set<Element>): string | null {
  const el = findOutside(member, bodyEl, set, (c) => {
    if (c.contains(bodyEl) || !isPostTitle(c)) return false;
    return !c.querySelector('time, relative-time') && !isAuthorMarker(c) && !Array.from(c.querySelectorAll('[class]')).some((d) => isAuthorMarker(d) || isDateElement(d));
  });
  const text = el ? squash(el.textContent ?? '') : '';
  return text && text.length <= MAX_TITLE_CHARS ? text : null;
}

function isPostTitle(el: Element): boolean {
  if (/^h[2-6]$/.test(el.localName)) return true;
  if (!el.hasAttributes()) return false;
  const names = `${el.getAttribute('class') ?? ''} ${el.getAttribute('itemprop') ?? ''} ${el.getAttribute('data-hook') ?? ''}`;
  return names.split(/\s+/).some((token) => token && TITLE_NAME.test(token));
}

// A reply's prefix before the topic it repeats: "Re:", phpBB's "Re[2]:", German "AW:", Nordic
// "SV:"/"VS:", Polish "Odp:", Dutch "Antw:", Turkish "YNT:", Italian "R:".
const REPLY_PREFIX = /^(?:re|aw|sv|vs|odp|antw|ynt|r)(?:\[\d+\]|\^\d+)?\s*:\s*/i;

/**
 * Titles that repeat the topic are no post's own: a forum's replies are titled "Re: <topic>"
 * (and the first post the topic itself), a link aggregator's submission the page's title. A title
 * that is the end of another, longer post title, and that other title, are dropped, and so is
 * one the page's <title> holds (the result's own field), with or without a reply's prefix. Posts
 * titled alike on purpose (a shop's reviews each "Five stars") keep their titles: each heads a
 * body of its own.
 */
function dropRepeatedTitles(posts: ThreadPost[], pageTitle: string): void {
  const titled = posts.map((post) => ({ post, title: post.title?.toLowerCase() ?? '' })).filter((t) => t.title);
  const repeated = new Set<ThreadPost>(titled.filter(({ title }) => pageTitle.includes(title) || pageTitle.includes(title.replace(REPLY_PREFIX, ''))).map((t) => t.post));
  for (const a of titled) for (const b of titled) if (b.title.length > a.title.length && b.title.endsWith(a.title)) repeated.add(a.post).add(b.post);
  for (const post of repeated) post.title = null;
}

/** A depth the page states: data-depth, depth or aria-level on the post, or an indent cell's level (Hacker News). */
function statedDepth(member: Element, bodyEl: Element): number {
  for (const name of ['data-depth', 'depth', 'aria-level']) {
    const raw = member.getAttribute(name);
    const v = raw === null ? Number.NaN : Number(raw);
    if (Number.isInteger(v) && v >= 0) return name === 'aria-level' ? Math.max(0, v - 1) : v;
  }
  const indented = findOutside(member, bodyEl, new Set(), (c) => c.hasAttribute('indent'));
  const v = Number(indented?.getAttribute('indent') ?? Number.NaN);
  return Number.isInteger(v) && v >= 0 ? v : 0;
}

/**
 * The text the thread is about when it is not the first post: the prose blocks before the first
 * post, looked for from the posts' common container outwards, no further than the page's main
 * part (a link aggregator's submission text sits in a table beside the comments' table).
 */
function openingOf(body: Element, members: Element[], set: Set<Element>, tallies: Map<Element, Tally>): Thread['opening'] {
  const first = members[0]!;
  let scope: Element | null = commonAncestor(members) ?? body;
  // The page's title heading, when it is before the posts: what they discuss is around it, so
  // the search goes on out to it (a shop's reviews widget sits in a section of its own, several
  // containers away from the product's description).
  const title = body.getElementsByTagName('h1')[0];
  const titleBefore = !!title && !first.contains(title) && tallies.get(title)!.order < tallies.get(first)!.order;
  let titleSeen = false;
  for (let level = 0; scope && (level <= OPENING_LEVELS || (titleBefore && !titleSeen)); level++) {
    titleSeen ||= !!title && scope.contains(title);
    const blocks: Element[] = [];
    let author: Element | null = null;
    let date: Element | null = null;
    let reached = false;
    const walk = (el: Element) => {
      for (let c = el.firstElementChild; c && !reached; c = c.nextElementSibling) {
        if (c === first || c.contains(first)) {
          if (c !== first) walk(c);
          reached = true;
          return;
        }
        if (set.has(c) || CHROME.has(c.localName) || CHROME_ROLES.has(c.getAttribute('role') ?? '')) continue;
        if (!author && isAuthorMarker(c)) author = c;
        // (A permalink holds the date: GitHub's "opened <relative-time>".)
        if (!date) date = isDateElement(c) ? c : c.localName === 'a' ? c.querySelector('time, relative-time') : null;
        // The title is the result's own field; a link is a title or a control, not the text.
        if (c.localName === 'a' || /^h[1-6]$/.test(c.localName)) continue;
        if (ownProse(c) >= OPENING_BLOCK_CHARS) blocks.push(c);
        else walk(c);
      }
    };
    walk(scope);
    const chars = blocks.reduce((n, b) => n + tallies.get(b)!.prose, 0);
    if (chars >= OPENING_CHARS) {
      const marker = author as Element | null;
      const stamp = date as Element | null;
      return { author: marker ? markerName(marker) : null, date: stamp ? dateText(stamp) : null, blocks };
    }
    const role = scope.getAttribute('role');
    if (scope === body || scope.localName === 'main' || scope.localName === 'article' || role === 'main') return null;
    scope = scope.parentElement;
  }
  return null;
}

/** Prose in the element's own text and inline children (not in its blocks, not in links). */
function ownProse(el: Element): number {
  let n = 0;
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3) n += (c as Text).data.trim().length;
    else if (c.nodeType === 1 && INLINE.has((c as Element).localName)) n += ownProse(c as Element);
  }
  return n;
}
const INLINE = new Set(['b', 'strong', 'i', 'em', 'code', 'span', 'small', 'mark', 'abbr', 'q', 'cite', 'sub', 'sup', 'br', 'font', 'u', 's']);

function commonAncestor(els: Element[]): Element | null {
  let found: Element | null = els[0]!.parentElement;
  for (const el of els.slice(1)) while (found && !found.contains(el)) found = found.parentElement;
  return found;
}

// A score or vote count left inside a body (a comment's score under a Stack Exchange answer).
const VOTE_CLASS = /(?:^|[\s_-])(?:score|votes?|vote-count|upvotes?|points|karma)(?:$|[\s_-])/i;

/**
 * The thread as one element to convert: the opening, then each post as a line naming its author
 * (and whom a reply answers) and date, followed by its body. `document` makes the new elements.
 */
export function renderThread(document: Document, thread: Thread): HTMLElement {
  const out = document.createElement('div');
  const line = (author: string | null, replyTo: string | null, date: string | null) => {
    const p = document.createElement('p');
    if (author) {
      const strong = document.createElement('strong');
      strong.textContent = author;
      p.appendChild(strong);
    }
    const rest = [replyTo ? `replying to ${replyTo}` : null, date].filter(Boolean).join(' · ');
    if (rest) p.appendChild(document.createTextNode(author ? `${replyTo ? ', ' : ' · '}${rest}` : rest));
    return p;
  };
  if (thread.opening) {
    if (thread.opening.author) out.appendChild(line(thread.opening.author, null, thread.opening.date));
    for (const block of thread.opening.blocks) out.appendChild(block.cloneNode(true));
  }
  // The author of the latest post at each depth, for "replying to".
  const lastAt: (string | null)[] = [];
  let commented: string | null = null;
  for (const post of thread.posts) {
    const replyTo = post.depth > 0 ? (lastAt[post.depth - 1] ?? null) : null;
    lastAt[post.depth] = post.author;
    lastAt.length = post.depth + 1;
    if (post.author || post.date) out.appendChild(line(post.author, replyTo, post.date));
    if (post.title) {
      const title = document.createElement('p');
      title.appendChild(document.createElement('strong')).textContent = post.title;
      out.appendChild(title);
    }
    const body = post.body.cloneNode(true) as Element;
    for (const widget of Array.from(body.querySelectorAll('[class]'))) if (VOTE_CLASS.test(widget.getAttribute('class') ?? '')) widget.remove();
    // Comments answer their post; a block of comments read as a post of its own (no author of
    // its own), the post above it.
    if (post.author) commented = post.author;
    for (const comment of commentsIn(body)) comment.container.insertBefore(line(comment.author, commented, comment.date), comment.container.firstChild);
    out.appendChild(body);
  }
  return out;
}

// A comment's text: at least this much outside its author and date.
const MIN_COMMENT_CHARS = 15;
// What is left between a comment's text and its author once they are taken out ("text – author").
const DANGLING_SEPARATOR = /[\s\u00a0]*[–—-][\s\u00a0]*$/;

/**
 * Comments inside a post's body (Stack Exchange's under an answer: "text – author date"): each
 * author marker in the body with a date beside it, in the nearest container holding a comment's
 * text besides them. The author and date are taken out of the text (they go in the comment's
 * line, which the caller puts first), with the dash that joined them to it.
 */
function commentsIn(body: Element): { container: Element; author: string | null; date: string | null }[] {
  const found: { container: Element; author: string | null; date: string | null }[] = [];
  for (const marker of Array.from(body.querySelectorAll('*'))) {
    if (!marker.parentNode || !isAuthorMarker(marker) || found.some((c) => c.container.contains(marker))) continue;
    const name = markerName(marker);
    if (!name) continue;
    let container: Element | null = marker.parentElement;
    let dateEl: Element | null = null;
    for (; container && container !== body; container = container.parentElement) {
      dateEl = Array.from(container.querySelectorAll('*')).find((el) => isDateElement(el) && !el.contains(marker)) ?? null;
      const rest = squash(container.textContent ?? '').length - squash(marker.textContent ?? '').length - squash(dateEl?.textContent ?? '').length;
      if (rest >= MIN_COMMENT_CHARS) break;
    }
    if (!container || container === body || !dateEl) continue;
    const date = dateText(dateEl);
    for (const el of [outermostAlone(marker, container), outermostAlone(dateEl, container)]) el.remove();
    for (let last = container.lastChild; last && last.nodeType === 3; last = container.lastChild) {
      const text = (last as Text).data.replace(DANGLING_SEPARATOR, '');
      if (text.trim()) {
        (last as Text).data = text;
        break;
      }
      last.remove();
    }
    found.push({ container, author: name, date });
  }
  return found;
}

/** The outermost wrapper of `el` below `container` holding nothing but it. */
function outermostAlone(el: Element, container: Element): Element {
  let at = el;
  while (at.parentElement && at.parentElement !== container && squash(at.parentElement.textContent ?? '') === squash(el.textContent ?? '')) at = at.parentElement;
  return at;
}

function squash(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
