/**
 * What a tool answers the model with (spec 01 "What a tool answers with"): a JSON document where
 * an empty result says `found: false` with a note, a failure says `ok: false` and why, and every
 * field is cut at 8 KiB with the cut stated in the text.
 */

// spec 01: each field is cut at 8 KiB, with the cut stated in the text rather than implied.
export const MAX_FIELD_BYTES = 8 * 1024;

export type ToolResult = Record<string, unknown>;

/** A text cut to `max` bytes of UTF-8 (the note included); `cut` says whether anything was dropped. */
export function cutText(text: string, max = MAX_FIELD_BYTES): { text: string; cut: boolean } {
  // Each UTF-16 unit is at most 3 UTF-8 bytes: short strings need no measuring.
  if (text.length * 3 <= max) return { text, cut: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, cut: false };
  const note = `\n[cut: the first ${max} of ${bytes.length} bytes are shown; the rest was dropped]`;
  const keep = max - Buffer.byteLength(note);
  // A cut inside a multi-byte character leaves a replacement character at the end: drop it.
  const head = bytes
    .subarray(0, keep)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return { text: head + note, cut: true };
}

// A base64 data: URI long enough to matter (an image pasted into a page). A parameter's value
// stops at a `:` as at a `;`, so that no match can run on into the next `data:`: with `:` allowed,
// every `data:` searched on through all the parameters after it (a page of `data:a/a;b=` repeated
// took two minutes a megabyte; web_fetch's 8 KiB bound its cost here, not the pattern).
const INLINE_DATA = /data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;:,\s()"']*)*);base64,([A-Za-z0-9+/]{128,}={0,2})/g;

/**
 * Inline base64 data (a page's `![logo](data:image/png;base64,...)`) replaced by its type and
 * size, the omission stated in the text: bytes the model cannot read as text, which would
 * otherwise spend the field's 8 KiB and be replayed on every later turn (spec 01).
 */
export function elideInlineData(text: string): string {
  if (!text.includes(';base64,')) return text;
  return text.replace(INLINE_DATA, (_all, mime: string | undefined, _params: string, payload: string) => {
    const bytes = Math.floor((payload.length * 3) / 4);
    return `data:${mime ?? ''};base64,[${bytes} bytes of inline data omitted]`;
  });
}

/** Every string in a JSON-like value cut at 8 KiB (deeply), so no field of a result can flood the prompt. */
export function cutFields<T>(value: T): T {
  if (typeof value === 'string') return cutText(value).text as T;
  if (Array.isArray(value)) return value.map((v: unknown) => cutFields(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = cutFields(v);
    return out as T;
  }
  return value;
}

/** A call that could not do its work: `ok: false`, a machine code and the reason in words. */
export function failed(error: string, why: string, extra: Record<string, unknown> = {}): ToolResult {
  return { ok: false, error, why, ...extra };
}

/** A call that worked and found nothing: distinct from a failure, so the model cannot confuse the two. */
export function notFound(note: string, extra: Record<string, unknown> = {}): ToolResult {
  return { ok: true, found: false, note, ...extra };
}

/** The tool message content the model reads. */
export function renderResult(result: ToolResult | string): string {
  if (typeof result === 'string') return cutText(result).text;
  return JSON.stringify(cutFields(result));
}

/**
 * The error of a thrown value in the `ok: false` shape (chat tools and Responses' hosted tools):
 * RpcError-like values keep their code, a cancelled call says so, anything else takes the caller's code.
 */
export function failureOf(err: unknown, fallbackCode = 'tool_failed'): ToolResult {
  const e = err as { code?: unknown; message?: unknown; name?: unknown };
  if (e?.name === 'AbortError') return failed('aborted', 'the request was cancelled');
  const code = typeof e?.code === 'string' && e.code ? e.code : fallbackCode;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  return failed(code, message);
}
