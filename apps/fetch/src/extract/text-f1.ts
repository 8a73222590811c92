// Token-level F1 between extracted markdown and the expected text of a fixture page: the
// measure of extraction quality. Not used by the service; it lives in src so that the test suite
// (test/extraction.spec.ts) and bench/fetch (from the built dist) share one copy.

/** Markdown syntax out, words in: links keep their text, images their alt, code its content. */
export function markdownToText(md: string): string {
  return md
    .replace(/^(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1');
}

const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Lowercase word tokens; scripts written without spaces count one token per character. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) {
    if (NO_SPACE_SCRIPT.test(word)) out.push(...Array.from(word));
    else out.push(word);
  }
  return out;
}

export interface F1 {
  precision: number;
  recall: number;
  f1: number;
}

/** Bag-of-tokens precision, recall and F1 of `got` against `expected`. */
export function tokenF1(got: string, expected: string): F1 {
  const g = tokens(got);
  const e = tokens(expected);
  const counts = new Map<string, number>();
  for (const t of e) counts.set(t, (counts.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of g) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      overlap++;
      counts.set(t, c - 1);
    }
  }
  const precision = g.length ? overlap / g.length : 0;
  const recall = e.length ? overlap / e.length : 0;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

/**
 * Token-shingle precision and recall of `got` against `expected`: both texts cut into runs of
 * `n` consecutive tokens, counted as bags; a shingle of `got` is right as often as it occurs in
 * `expected`. Unlike the bag of single tokens, a shingle also checks the words' order and
 * neighbourhood, so a navigation menu made of words the article also uses still counts as extra
 * text. A text shorter than `n` tokens is one shingle. Nothing extracted: precision 0.
 */
export function shingleF1(got: string, expected: string, n = 4): F1 {
  const g = shingles(tokens(got), n);
  const e = shingles(tokens(expected), n);
  const counts = new Map<string, number>();
  for (const s of e) counts.set(s, (counts.get(s) ?? 0) + 1);
  let overlap = 0;
  for (const s of g) {
    const c = counts.get(s) ?? 0;
    if (c > 0) {
      overlap++;
      counts.set(s, c - 1);
    }
  }
  const precision = g.length ? overlap / g.length : 0;
  const recall = e.length ? overlap / e.length : g.length ? 0 : 1;
  return { precision, recall, f1: harmonic(precision, recall) };
}

/** Precision and recall averaged over pages (each page weighs the same), F1 of those means. */
export function macroF1(pages: F1[]): F1 {
  if (pages.length === 0) return { precision: 0, recall: 0, f1: 0 };
  const precision = pages.reduce((a, p) => a + p.precision, 0) / pages.length;
  const recall = pages.reduce((a, p) => a + p.recall, 0) / pages.length;
  return { precision, recall, f1: harmonic(precision, recall) };
}

function shingles(toks: string[], n: number): string[] {
  if (toks.length === 0) return [];
  if (toks.length < n) return [toks.join(' ')];
  const out: string[] = [];
  for (let i = 0; i + n <= toks.length; i++) out.push(toks.slice(i, i + n).join(' '));
  return out;
}

function harmonic(p: number, r: number): number {
  return p + r ? (2 * p * r) / (p + r) : 0;
}
