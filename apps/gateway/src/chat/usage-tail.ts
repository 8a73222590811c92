import { isTokenCount } from '../upstream/token-usage.js';

/** Token counts an answer reported, as the metrics take them. */
export interface TailUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

/**
 * How far from the end of a proxied answer `usage` is looked for. OpenAI-compatible servers put
 * `usage` after `choices` (then at most `service_tier`, `system_fingerprint`, a few short fields);
 * in a stream it is the last data event before `[DONE]`. Its object with both `*_details` parts
 * is under 400 bytes; 4 KiB leaves room for servers that add fields after it. Bounded, so reading
 * usage costs the same for a one-line answer and a 100 KiB one (issue 18: no per-chunk cost).
 */
export const USAGE_TAIL_BYTES = 4096;

const KEY = Buffer.from('"usage"');

/**
 * The `usage` an OpenAI-compatible answer reports, read from its last bytes only: a non-streamed
 * body's tail, or a stream's final events (the usage event a client gets when it asked for
 * `stream_options.include_usage`). Undefined when the tail holds no usage object with
 * non-negative integer counts (completion_tokens may be absent: an embeddings answer's) (a stream without include_usage, `"usage":null` on every chunk,
 * a server that reports none, or one that put it further up): nothing is counted then.
 * `parts` are the last buffers of the answer, in order; only their last USAGE_TAIL_BYTES are read.
 */
export function usageFromTail(parts: readonly (Buffer | undefined)[]): TailUsage | undefined {
  const tail = lastBytes(parts, USAGE_TAIL_BYTES);
  // The last `"usage"` key is the answer's own (an earlier one in the window is a streamed chunk's `null`).
  let at = tail.lastIndexOf(KEY);
  while (at >= 0) {
    const found = objectAfterKey(tail, at + KEY.length);
    if (found !== null) return found;
    at = at === 0 ? -1 : tail.lastIndexOf(KEY, at - 1);
  }
  return undefined;
}

/** The last `max` bytes of `parts` joined; only the parts needed are copied. */
function lastBytes(parts: readonly (Buffer | undefined)[], max: number): Buffer {
  const picked: Buffer[] = [];
  let size = 0;
  for (let i = parts.length - 1; i >= 0 && size < max; i--) {
    const p = parts[i];
    if (!p || p.length === 0) continue;
    const take = Math.min(p.length, max - size);
    picked.unshift(take === p.length ? p : p.subarray(p.length - take));
    size += take;
  }
  return picked.length === 1 ? picked[0]! : Buffer.concat(picked, size);
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * After a `"usage"` key: `: {…}` parsed as JSON when the object closes inside the window and
 * holds the two counts; null otherwise (`null`, a cut object, a key inside some string).
 */
function objectAfterKey(buf: Buffer, from: number): TailUsage | null {
  let i = from;
  while (i < buf.length && SPACE.has(buf[i]!)) i++;
  if (buf[i] !== 0x3a /* : */) return null;
  i++;
  while (i < buf.length && SPACE.has(buf[i]!)) i++;
  if (buf[i] !== 0x7b /* { */) return null;
  const end = closingBrace(buf, i);
  if (end < 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(buf.toString('utf8', i, end + 1));
  } catch {
    return null;
  }
  const u = value as Record<string, unknown>;
  // An embeddings answer reports input tokens only: no completion_tokens is none.
  const completion = u.completion_tokens === undefined ? 0 : u.completion_tokens;
  return isTokenCount(u.prompt_tokens) && isTokenCount(completion) ? { prompt_tokens: u.prompt_tokens, completion_tokens: completion } : null;
}

/** The index of the `}` closing the object that opens at `open`, skipping strings; -1 when it does not close in `buf`. */
function closingBrace(buf: Buffer, open: number): number {
  let depth = 0;
  let inString = false;
  for (let i = open; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return i;
  }
  return -1;
}
