// Token F1 of extracted markdown against expected text. Same measure as
// apps/fetch/test/support/text-f1.ts (kept in step by hand; both are a dozen lines).
export function markdownToText(md) {
  return md
    .replace(/^(```|~~~).*$/gm, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1');
}

const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

export function tokens(text) {
  const out = [];
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? []) {
    if (NO_SPACE_SCRIPT.test(word)) out.push(...Array.from(word));
    else out.push(word);
  }
  return out;
}

export function tokenF1(got, expected) {
  const g = tokens(got);
  const e = tokens(expected);
  const counts = new Map();
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
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}
