import { detectLegacyEncoding } from '../http/content-type.js';
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
  return { ...page, scriptFilled };
}

/**
 * A JSON body indented for reading, or as it came when it is not JSON or too deep to write out
 * again. JSON.parse of 3 MB of nested brackets takes over a second; writing one back out, as long.
 */
export function formatJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text.trim();
  }
}

export function focusContent(req: FocusRequest): string {
  return applyFocus(req.content, req.focus, req.budget);
}

/** An unlabelled body's legacy encoding; the sample arrives as a Uint8Array (a Buffer's structured clone). */
export function detectEncoding(sample: Uint8Array): string | undefined {
  return detectLegacyEncoding(Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength));
}
