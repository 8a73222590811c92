import type { SearchResult } from '@drael/contracts';
import type { SearxResult } from '../searx/searx.client.js';

export function toResult(r: SearxResult, asked: ReadonlySet<string>): SearchResult | null {
  const engines = (r.engines ?? (r.engine ? [r.engine] : [])).filter((e) => asked.has(e));
  // A result from an engine that was not asked means SearXNG fell back: not ours to return.
  if (engines.length === 0) return null;
  return {
    title: r.title ?? '',
    url: r.url,
    snippet: r.content ?? '',
    source: engines[0]!,
    engines,
    page_age: pageAge(r),
    verified: false,
  };
}

/** YYYY-MM-DD from the engine's published date, whichever of SearXNG's two fields carries it. */
export function pageAge(r: SearxResult): string | null {
  for (const value of [r.pubdate, r.publishedDate]) {
    const m = value ? /^(\d{4}-\d{2}-\d{2})[ T]/.exec(value) : null;
    if (m) return m[1]!;
  }
  return null;
}

export function isOnionUrl(url: string): boolean {
  try {
    return new URL(url).hostname.endsWith('.onion');
  } catch {
    return false;
  }
}
