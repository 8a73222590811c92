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
  const scored = blocks.map((b) => {
    const own = score(b.text);
    const sectionScore = b.section !== null ? score(blocks[b.section]!.text) : 0;
    return { block: b, own, total: own + sectionScore / 2 };
  });
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

/** Cuts at `max` characters, at a word boundary when one is near. */
export function truncate(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let cut = text.slice(0, max);
  const lastSpace = cut.search(/\s\S*$/);
  if (lastSpace > max * 0.9) cut = cut.slice(0, lastSpace);
  return { text: cut.trimEnd(), truncated: true };
}
