import { detectLegacyEncoding, type ContentKind } from '../http/content-type.js';
import { applyFocus } from './focus.js';
import { HtmlExtractor, normaliseSpace, type ExtractedPage } from './html-extractor.js';
import { awaitsScript } from './script-filled.js';

/** One HTML page to read, as ExtractionPool hands it to a worker thread. */
export interface ReadRequest {
  readonly html: string;
  readonly url: string;
  /**
   * Also tell whether the served HTML leaves its content to a script (awaitsScript), when the
   * page has a script and its text is shorter than this; absent: not asked (a rendered page).
   */
  readonly scriptFilledBelowChars?: number;
}

export interface ReadPage extends ExtractedPage {
  /** Only when asked (scriptFilledBelowChars): awaitsScript's answer; false otherwise. */
  readonly scriptFilled: boolean;
}

/** The parts of a page's content about `focus`, within `budget` characters (applyFocus). */
export interface FocusRequest {
  readonly content: string;
  readonly focus: string;
  readonly budget: number;
}

// One per worker thread, made when the thread loads this module (the pool keeps a thread warm).
const extractor = new HtmlExtractor();

/**
 * The worker thread's tasks (ExtractionPool, piscina): every step whose cost the fetched page
 * decides runs here, off the service's event loop, where the pool can stop it when it runs past
 * its time. The default export reads an HTML page.
 */
export default function readPage(req: ReadRequest): ReadPage {
  const page = extractor.extract(req.html, req.url);
  const limit = req.scriptFilledBelowChars;
  const scriptFilled = limit !== undefined && /<script\b/i.test(req.html) && normaliseSpace(page.markdown).length < limit && awaitsScript(req.html);
  return { ...page, markdown: withoutControls(page.markdown), scriptFilled };
}

/** A body that is not HTML, of the kind its type says: the text of a page's content. */
export interface TextRequest {
  readonly kind: Exclude<ContentKind, 'html'>;
  readonly text: string;
}

/** The content of a body that is not HTML: JSON indented (formatJson) and fenced, XML fenced, text as it came; without control characters. */
export function formatText(req: TextRequest): string {
  const content = req.kind === 'json' ? fenced('json', formatJson(req.text)) : req.kind === 'xml' ? fenced('xml', req.text.trim()) : req.text.trim();
  return withoutControls(content);
}

function fenced(lang: string, body: string): string {
  const fence = body.includes('```') ? '~~~~' : '```';
  return `${fence}${lang}\n${body}\n${fence}`;
}

// C0 control characters but tab, line feed and carriage return, and DEL: nothing a reader reads,
// and JSON writes each C0 one as six characters: a 3 MB text/plain body of U+0001 became an 18 MB
// cache entry whose JSON.stringify held the service's loop 0.4-0.7 s on every miss.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * `text` without control characters. Removed from its UTF-8 bytes, where each is one byte and
 * never part of another character: one pass whatever their number (a string replace paid per
 * match: 430 ms for 3 MB of them alternating with letters, against 40 here).
 */
export function withoutControls(text: string): string {
  if (!CONTROL.test(text)) return text;
  const bytes = Buffer.from(text, 'utf8');
  let kept = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f) continue;
    bytes[kept++] = b;
  }
  return bytes.toString('utf8', 0, kept);
}

/**
 * A JSON body indented for reading, or as it came when it is not JSON, too deep to write out again,
 * or when indenting would make it much larger than it came. JSON.parse of 3 MB of nested brackets
 * takes over a second; and indentation grows with depth on every line: 20 KB nested 5,000 deep
 * came out as 75 MB, 236 KB as 242 MB (a second of the service's loop to take back from this
 * thread, and that much in the page cache).
 */
function formatJson(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text.trim();
  }
  if (indentationExceeds(value, Math.max(text.length, MIN_INDENTATION_ALLOWED))) return text.trim();
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return text.trim();
  }
}

// The indentation a body may gain whatever its size: an ordinary API answer's indented form is
// one to two times its compact one.
const MIN_INDENTATION_ALLOWED = 64 * 1024;

/**
 * Whether writing `value` with two-space indentation adds more than `limit` characters of
 * indentation: every value in a container starts a line indented by its depth, every non-empty
 * container closes one. Walked without recursion and stopped at the limit.
 */
function indentationExceeds(value: unknown, limit: number): boolean {
  let added = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v as Record<string, unknown>);
    if (children.length === 0) continue;
    // A line per child at depth + 1, and the closing line at depth.
    added += children.length * 2 * (depth + 1) + 2 * depth + children.length + 1;
    if (added > limit) return true;
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

export function focusContent(req: FocusRequest): string {
  return applyFocus(req.content, req.focus, req.budget);
}

/** An unlabelled body's legacy encoding; the sample arrives as a Uint8Array (a Buffer's structured clone). */
export function detectEncoding(sample: Uint8Array): string | undefined {
  return detectLegacyEncoding(Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength));
}
