import { closingQuoteOf, JSON_BYTE } from '@drael/contracts';

/**
 * Whether a JSON object's bytes say exactly what JSON.parse made of them, at the top level: each
 * key written once and without escapes. Proxy mode forwards the client's bytes untouched (no
 * re-encoding on the hot path), and an upstream's parser must then read the `model`, `stream` and
 * `tools` the gateway validated, routed and billed. JSON leaves duplicate keys to the parser
 * (RFC 8259 §4): JSON.parse keeps the last, others the first or refuse, and a parser that matches
 * keys as bytes does not read `"mod\u0065l"` as `model`. A body that fails this is re-encoded from
 * the parsed object instead (see forwardedBody). Keys that differ only in case are refused before
 * this (validate.ts caseVariantKeyOf): no encoding makes them unambiguous to Go's encoding/json.
 *
 * One pass over the bytes; strings, which hold nearly all of a request's bytes, are skipped with
 * Buffer.indexOf (native), so the JavaScript loop walks the structure only.
 */
export function hasPlainDistinctTopLevelKeys(raw: Buffer, parsedKeyCount: number): boolean {
  const n = raw.length;
  let depth = 0;
  let keys = 0;
  // At depth 1, the next string is a key (after `{` or `,`), not a value (after `:`).
  let keyNext = false;
  // The first backslash at or after the current key (-1: none left), found again only once passed:
  // searched afresh for every key, a body of many keys and no backslash was scanned to its end once
  // per key (1 MiB of short keys: 660 ms; the 32 MiB body limit: minutes).
  let backslash = -2;
  for (let i = 0; i < n; i++) {
    const c = raw[i]!;
    if (c === QUOTE) {
      const end = closingQuoteOf(raw, i + 1);
      if (end === -1) return false;
      if (depth === 1 && keyNext) {
        if (backslash !== -1 && backslash <= i) backslash = raw.indexOf(BACKSLASH, i + 1);
        if (backslash !== -1 && backslash < end) return false;
        keys++;
        keyNext = false;
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth === 1) keyNext = c === OPEN_BRACE;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COMMA && depth === 1) {
      keyNext = true;
    }
  }
  return keys === parsedKeyCount;
}

const { QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA } = JSON_BYTE;

/**
 * What a deployment is sent for a proxied body: the client's bytes when nothing in them has to
 * change and they are unambiguous (above), else the parsed object, with `changes` over it,
 * re-encoded. The verdict on the bytes is taken once per request, on the first attempt.
 */
export function forwardedBody(parsed: Record<string, unknown>, raw: Buffer | undefined): (changes: Record<string, unknown> | undefined) => string | Buffer {
  let plain: boolean | undefined;
  return (changes) => {
    if (changes === undefined && raw !== undefined && (plain ??= hasPlainDistinctTopLevelKeys(raw, Object.keys(parsed).length))) return raw;
    return JSON.stringify(changes === undefined ? parsed : { ...parsed, ...changes });
  };
}
