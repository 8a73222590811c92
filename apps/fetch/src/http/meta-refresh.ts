// A refresh this soon is a redirect in all but name ("This page has moved…"); a longer one is a
// page that reloads itself now and then (news front pages), to be read as it is.
const MAX_REDIRECT_DELAY_S = 5;
// The refresh must be in the page's head: only this much of it is searched, which also bounds
// the work on a hostile page.
const HEAD_CHARS = 16_384;

/**
 * Where an HTML page's `<meta http-equiv="refresh" content="N; url=…">` sends the reader at once
 * (N at most MAX_REDIRECT_DELAY_S), resolved against the page's URL; undefined for none, a later
 * one, an unparseable one, one to the page itself or to anything but http(s). The caller vets and counts it as a redirect
 * hop, as a browser would have followed it.
 */
export function metaRefreshTarget(html: string, pageUrl: URL): string | undefined {
  const head = html.slice(0, HEAD_CHARS);
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    if (!/\bhttp-equiv\s*=\s*["']?refresh\b/i.test(tag)) continue;
    const content = /\bcontent\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    const value = content?.[1] ?? content?.[2] ?? content?.[3];
    if (value === undefined) return undefined;
    // "5; url=/next", "0;URL='/next'", "0, /next" (HTML's refresh syntax, leniently)
    const parsed = /^\s*(\d+)(?:\.\d*)?\s*(?:[;,]\s*(?:url\s*=\s*)?["']?([^"']*)["']?)?\s*$/i.exec(value);
    if (!parsed || Number(parsed[1]) > MAX_REDIRECT_DELAY_S || !parsed[2]?.trim()) return undefined;
    try {
      const target = new URL(parsed[2].trim(), pageUrl);
      // Only to another web page: a refresh to javascript:, data: or file: is not followed.
      if (target.protocol !== 'http:' && target.protocol !== 'https:') return undefined;
      target.hash = '';
      const here = new URL(pageUrl);
      here.hash = '';
      return target.href === here.href ? undefined : target.href;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
