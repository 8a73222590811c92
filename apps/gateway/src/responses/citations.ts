import type { Source } from './hosted/tool-outcome.js';

export interface UrlCitation {
  type: 'url_citation';
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

// Citations one text carries at most (spec 02: a search "may add" them): a model text repeating a
// returned URL 1 MiB long made up to 75,000, each an annotation event and a part of the stored response.
const MAX_CITATIONS_PER_TEXT = 1000;

/**
 * spec 02: a completed search may add URL citations to the assistant text. A citation is added
 * where the text names a URL the hosted tools actually returned (bare, or as a markdown link,
 * which is then cited whole); URLs the model made up are never cited. The first
 * MAX_CITATIONS_PER_TEXT mentions are cited.
 *
 * Linear in the text: mentions are taken in the order they appear (the longer URL first where two
 * start together, so /a/b is not also cited as /a), each checked against the end of the last one
 * taken, and a link's `[` is looked for back to that end at most. Checked against every citation
 * taken, and the `[` looked for back to the text's start, a 1 MiB text repeating one URL held the
 * loop 6 to 16 s (audit).
 */
export function citationsOf(text: string, sources: readonly Source[]): UrlCitation[] {
  const titles = new Map<string, string>();
  for (const source of sources) if (!titles.has(source.url)) titles.set(source.url, source.title ?? source.url);
  const mentions: Array<{ at: number; url: string }> = [];
  for (const url of titles.keys()) {
    if (url === '') continue;
    for (let at = text.indexOf(url); at !== -1; at = text.indexOf(url, at + url.length)) mentions.push({ at, url });
  }
  mentions.sort((a, b) => a.at - b.at || b.url.length - a.url.length);
  const out: UrlCitation[] = [];
  let takenTo = 0;
  for (const { at, url } of mentions) {
    if (out.length >= MAX_CITATIONS_PER_TEXT) break;
    // Within one already cited (a longer URL starting here, or a link around it): not this one.
    if (at < takenTo) continue;
    let start = at;
    let end = at + url.length;
    if (text.slice(start - 2, start) === '](' && text[end] === ')') {
      let open = start - 3;
      while (open >= takenTo && text[open] !== '[') open--;
      if (open >= takenTo) {
        start = open;
        end += 1;
      }
    }
    takenTo = end;
    out.push({ type: 'url_citation', start_index: start, end_index: end, url, title: titles.get(url)! });
  }
  return out;
}
