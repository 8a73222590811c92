/**
 * The bound on JSON nesting, at every edge: each HTTP route's body (the gateway) and each NATS
 * request (packages/nats-rpc). Far above any real request (tool schemas nest ~10), far below what
 * recursive code (validation, re-encoding, JSON.stringify) can walk without running out of stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` (parsed JSON) nests objects or arrays more than `limit` levels deep. It visits
 * containers only and stops at the limit, so its cost follows the value's structure, not its size.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestedDeeperThan(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) if (nestedDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true;
  return false;
}

/**
 * Below this many bytes a JSON text is parsed before its depth is told (nestedDeeperThan): the
 * deepest such text parses in about a millisecond. Above it the bytes are read first
 * (jsonTextNestedDeeperThan): JSON.parse takes ~350 ms a megabyte of nested brackets, against ~40
 * for a flat text (32 MiB, the gateway's body limit: 11 s of the event loop; 8 MB, NATS's payload
 * limit: 2.5 s), all of it spent before a parsed value can be refused.
 */
export const DEPTH_PRESCAN_FROM_BYTES = 4 * 1024;

/** The bytes JSON's structure is written with, for the scanners that read JSON text before it is parsed. */
export const JSON_BYTE = { QUOTE: 0x22, BACKSLASH: 0x5c, OPEN_BRACE: 0x7b, CLOSE_BRACE: 0x7d, OPEN_BRACKET: 0x5b, CLOSE_BRACKET: 0x5d, COMMA: 0x2c } as const;
const { QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET } = JSON_BYTE;

/**
 * True when JSON text nests arrays or objects more than `limit` levels deep, told from its bytes
 * (UTF-8) before it is parsed: one pass that counts brackets and skips strings with a native
 * search for their closing quote, so a text of long strings costs little. For valid JSON it says
 * what nestedDeeperThan says of the parsed value; for text that is not JSON its answer does not
 * matter (the parse refuses it).
 */
export function jsonTextNestedDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = closingQuoteOf(bytes, i + 1);
      if (i === -1) return false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes a JSON string whose content starts at `from` (one not escaped), or -1. */
export function closingQuoteOf(bytes: Uint8Array, from: number): number {
  let q = bytes.indexOf(QUOTE, from);
  while (q !== -1) {
    let backslashes = 0;
    while (bytes[q - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
    q = bytes.indexOf(QUOTE, q + 1);
  }
  return -1;
}
