/**
 * A page's text with its markup blanked, for telling its encoding from its letters: every script
 * or style element with its content, comment, tag and character reference is one space. The same
 * as `text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>|<!--[\s\S]*?-->|<[^>]*>|&#?\w+;/gi, ' ')`,
 * which this replaced, in one pass: that pattern searched the rest of the text again from every
 * `<` that opened something it did not close, so 64 KB of `<a` (three bytes that are not UTF-8
 * after it, no charset named) held the fetch service's event loop for two seconds on a page the
 * caller chooses (`markup-text.spec.ts` holds the two to the same answers).
 */
export function blankMarkup(text: string): string {
  const n = text.length;
  const out: string[] = [];
  // From where on each search is known to find nothing: a later start finds nothing either, so a
  // failed search is never repeated and every character is scanned a bounded number of times.
  const noneFrom = { script: n + 1, style: n + 1, comment: n + 1, tag: n + 1 };
  let kept = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    let end = -1;
    if (c === LT) {
      const element = startsWithFolded(text, 'script', i + 1) ? 'script' : startsWithFolded(text, 'style', i + 1) ? 'style' : undefined;
      if (element && !isWordChar(text.charCodeAt(i + 1 + element.length))) end = closeOf(text, element, i + 1 + element.length, noneFrom);
      if (end === -1 && text.startsWith('<!--', i) && i + 4 < noneFrom.comment) {
        const close = text.indexOf('-->', i + 4);
        if (close === -1) noneFrom.comment = i + 4;
        else end = close + 3;
      }
      if (end === -1 && i + 1 < noneFrom.tag) {
        const close = text.indexOf('>', i + 1);
        if (close === -1) noneFrom.tag = i + 1;
        else end = close + 1;
      }
    } else if (c === AMP) {
      end = referenceEnd(text, i);
    }
    if (end === -1) {
      i++;
      continue;
    }
    out.push(text.slice(kept, i), ' ');
    i = end;
    kept = end;
  }
  out.push(text.slice(kept));
  return out.join('');
}

/** Where `</element\s*>` (any case) ends, searching from `from` (-1: none), remembering a search that found nothing. */
function closeOf(text: string, element: 'script' | 'style', from: number, noneFrom: Record<'script' | 'style', number>): number {
  if (from >= noneFrom[element]) return -1;
  let at = text.indexOf('</', from);
  while (at !== -1) {
    if (startsWithFolded(text, element, at + 2)) {
      let j = at + 2 + element.length;
      while (j < text.length && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === GT) return j + 1;
    }
    at = text.indexOf('</', at + 2);
  }
  noneFrom[element] = from;
  return -1;
}

/** Whether `word` (lower-case ASCII) stands at `at`, ASCII letters in any case: what the pattern's `i` flag matched (it folds no other letter onto ASCII). */
function startsWithFolded(text: string, word: string, at: number): boolean {
  if (at + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    const c = text.charCodeAt(at + k);
    if ((c >= 0x41 && c <= 0x5a ? c + 0x20 : c) !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** Where `&#?\w+;` starting at `i` ends, or -1. */
function referenceEnd(text: string, i: number): number {
  let j = i + 1;
  if (text.charCodeAt(j) === HASH) j++;
  const word = j;
  while (j < text.length && isWordChar(text.charCodeAt(j))) j++;
  return j > word && text.charCodeAt(j) === SEMICOLON ? j + 1 : -1;
}

/** JavaScript's `\w`. */
function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/** JavaScript's `\s`. */
function isSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const HASH = 0x23;
const SEMICOLON = 0x3b;
