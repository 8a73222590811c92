import type { Source } from './hosted/tool-outcome.js';

export interface UrlCitation {
  type: 'url_citation';
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

/**
 * spec 02: a completed search may add URL citations to the assistant text. A citation is added
 * where the text names a URL the hosted tools actually returned (bare, or as a markdown link,
 * which is then cited whole); URLs the model made up are never cited.
 */
export function citationsOf(text: string, sources: readonly Source[]): UrlCitation[] {
  const out: UrlCitation[] = [];
  const seen = new Set<string>();
  const byLength = [...sources].sort((a, b) => b.url.length - a.url.length);
  const taken: Array<[number, number]> = [];
  for (const source of byLength) {
    if (seen.has(source.url)) continue;
    seen.add(source.url);
    for (let at = text.indexOf(source.url); at !== -1; at = text.indexOf(source.url, at + source.url.length)) {
      let start = at;
      let end = at + source.url.length;
      // A longer URL already cited here (e.g. /a/b when this source is /a): not this one.
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      if (text.slice(start - 2, start) === '](' && text[end] === ')') {
        const open = text.lastIndexOf('[', start - 2);
        if (open !== -1) {
          start = open;
          end += 1;
        }
      }
      taken.push([start, end]);
      out.push({ type: 'url_citation', start_index: start, end_index: end, url: source.url, title: source.title ?? source.url });
    }
  }
  return out.sort((a, b) => a.start_index - b.start_index);
}
