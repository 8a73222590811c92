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
    const parsed = declarativeRefresh(value);
    if (!parsed || parsed.seconds > MAX_REDIRECT_DELAY_S || !parsed.url?.trim()) return undefined;
    try {
      const target = new URL(parsed.url.trim(), pageUrl);
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

/**
 * A refresh's `content` read as browsers read it (HTML's "shared declarative refresh steps"): the
 * delay in whole seconds, then after `;`, `,` or white space the URL, with an optional `url=` and
 * quotes ("5; url=/next", "0;URL='/next'", "0, /next", "0 /next"). Undefined when it is no refresh;
 * `url` undefined when it names none (a reload in place). One pass: the pattern it replaced took
 * minutes on a value of a few kilobytes of white space and commas, on the service's event loop.
 */
export function declarativeRefresh(value: string): { seconds: number; url: string | undefined } | undefined {
  let at = skipWhitespace(value, 0);
  const digitsFrom = at;
  while (at < value.length && isDigit(value.charCodeAt(at))) at++;
  if (at === digitsFrom && value[at] !== '.') return undefined;
  const seconds = at === digitsFrom ? 0 : Number(value.slice(digitsFrom, at));
  // A fraction is read and ignored.
  while (at < value.length && (isDigit(value.charCodeAt(at)) || value[at] === '.')) at++;
  if (at < value.length) {
    if (value[at] !== ';' && value[at] !== ',' && !isWhitespace(value.charCodeAt(at))) return undefined;
    at = skipWhitespace(value, at);
    if (value[at] === ';' || value[at] === ',') at++;
    at = skipWhitespace(value, at);
  }
  if (at >= value.length) return { seconds, url: undefined };
  // `url =` is optional; without all of it the URL is the rest as it stands.
  let rest = value.slice(at);
  if (/^url/i.test(rest)) {
    let after = skipWhitespace(value, at + 3);
    if (value[after] === '=') {
      after = skipWhitespace(value, after + 1);
      rest = value.slice(after);
    }
  }
  const quote = rest[0] === '"' || rest[0] === "'" ? rest[0] : undefined;
  if (quote === undefined) return { seconds, url: rest };
  const url = rest.slice(1);
  const close = url.indexOf(quote);
  return { seconds, url: close === -1 ? url : url.slice(0, close) };
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** HTML's ASCII whitespace: tab, line feed, form feed, carriage return, space. */
const isWhitespace = (c: number) => c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x20;

function skipWhitespace(value: string, from: number): number {
  let at = from;
  while (at < value.length && isWhitespace(value.charCodeAt(at))) at++;
  return at;
}
