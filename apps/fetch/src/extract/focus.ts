// Keeps the parts of a markdown page that are about `focus`, in page order.

const STOPWORDS = new Set('a an and are as at be by for from has have how in is it its of on or that the this to was were what when where which who why with'.split(' '));

interface Block {
  index: number;
  text: string;
  heading: number | null;
  /** Index of the heading block this block sits under. */
  section: number | null;
}

function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => t.length > 1 && !STOPWORDS.has(t));
}

/** A crude stem (first 5 letters) so "hooks"/"hook" and "loader"/"loaders" meet. */
const stem = (t: string) => (t.length > 5 ? t.slice(0, 5) : t);

function splitBlocks(markdown: string): Block[] {
  const raw: string[] = [];
  let inFence = false;
  let current: string[] = [];
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const isHeading = !inFence && /^#{1,6}\s/.test(line);
    if ((!inFence && line.trim() === '') || isHeading) {
      if (current.length) raw.push(current.join('\n'));
      current = [];
      if (isHeading) raw.push(line);
      continue;
    }
    current.push(line);
  }
  if (current.length) raw.push(current.join('\n'));
  const blocks: Block[] = [];
  const openHeadings: { level: number; index: number }[] = [];
  raw.forEach((text, index) => {
    const level = /^(#{1,6})\s/.exec(text)?.[1]?.length ?? null;
    if (level !== null) {
      while (openHeadings.length && openHeadings[openHeadings.length - 1]!.level >= level) openHeadings.pop();
      blocks.push({ index, text, heading: level, section: openHeadings.at(-1)?.index ?? null });
      openHeadings.push({ level, index });
    } else {
      blocks.push({ index, text, heading: null, section: openHeadings.at(-1)?.index ?? null });
    }
  });
  return blocks;
}

/**
 * Scores each block by the focus terms it holds (its section heading counts for half), picks
 * the best blocks until `budget` characters, and returns them in page order with the headings
 * they sit under. A focus that matches nothing leaves the page whole.
 */
export function applyFocus(markdown: string, focus: string | undefined, budget: number): string {
  const wanted = new Set(terms(focus ?? '').map(stem));
  if (wanted.size === 0) return markdown;
  const blocks = splitBlocks(markdown);
  const score = (text: string) => {
    const ts = terms(text).map(stem);
    const hits = new Set(ts.filter((t) => wanted.has(t)));
    // Distinct terms matter more than repetitions; repetitions break ties.
    return hits.size * 10 + Math.min(ts.filter((t) => wanted.has(t)).length, 9);
  };
  // Each block is scored once: its section heading's score is read from there, not scored again
  // for every block under it (a long heading over thousands of short blocks held the fetch
  // service's loop for half a minute on a 124 KB page; the cost is now linear in the page).
  const own = blocks.map((b) => score(b.text));
  const scored = blocks.map((b, i) => ({ block: b, total: own[i]! + (b.section !== null ? own[b.section]! / 2 : 0) }));
  const ranked = scored.filter((s) => s.total > 0 && s.block.heading === null).sort((a, b) => b.total - a.total || a.block.index - b.block.index);
  if (ranked.length === 0) return markdown;

  const chosen = new Set<number>();
  let used = 0;
  for (const s of ranked) {
    if (used >= budget) break;
    chosen.add(s.block.index);
    used += s.block.text.length + 2;
    // The heading chain gives a chosen block its context.
    for (let h = s.block.section; h !== null; h = blocks[h]!.section) {
      if (!chosen.has(h)) {
        chosen.add(h);
        used += blocks[h]!.text.length + 2;
      }
    }
  }
  return blocks
    .filter((b) => chosen.has(b.index))
    .map((b) => b.text)
    .join('\n\n');
}

/**
 * The page from `offset` on, cut at `max` characters at the last boundary near the limit: a
 * paragraph break in the window's last quarter, else a line break or a sentence's end in its last
 * sixth, else a space in its last tenth, else exactly at `max` (never inside a surrogate pair). A
 * model reading the window then never meets a half word or a half sentence where a whole one fits.
 * `next` is where the following window begins (what the cut left, less the whitespace at the cut).
 */
export function truncate(text: string, max: number, offset = 0): { text: string; truncated: boolean; next?: number } {
  const rest = offset > 0 ? text.slice(offset) : text;
  if (rest.length <= max) return { text: rest, truncated: false };
  let end = cutPoint(rest, max);
  // Never split a surrogate pair.
  if (end === max && isHighSurrogate(rest.charCodeAt(end - 1))) end--;
  let next = end;
  while (next < rest.length && /\s/.test(rest[next]!)) next++;
  return { text: rest.slice(0, end).trimEnd(), truncated: true, next: offset + next };
}

function cutPoint(text: string, max: number): number {
  const paragraph = text.lastIndexOf('\n\n', max);
  if (paragraph >= max * 0.75) return paragraph;
  const line = text.lastIndexOf('\n', max);
  const sentence = lastSentenceEnd(text, max);
  const best = Math.max(line, sentence);
  if (best >= max * (5 / 6)) return best;
  const space = text.slice(0, max + 1).search(/\s\S*$/);
  if (space >= max * 0.9) return space;
  return max;
}

// The end of a sentence: its closing punctuation (and a closing quote or bracket) before whitespace.
const SENTENCE_END = /[.!?\u3002\uFF01\uFF1F]["')\]\u201D\u2019]?(?=\s)/g;

/** The index just after the last sentence end at or before `max`, or -1. */
function lastSentenceEnd(text: string, max: number): number {
  const window = text.slice(Math.floor(max * 0.8), max + 1);
  let found = -1;
  for (const m of window.matchAll(SENTENCE_END)) found = Math.floor(max * 0.8) + m.index + m[0].length;
  return found <= max ? found : -1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
