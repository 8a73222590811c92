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

// One per worker thread, made when the thread loads this module (the pool keeps a thread warm).
const extractor = new HtmlExtractor();

/**
 * The worker thread's task (ExtractionPool, piscina): every step that parses a page's HTML runs
 * here, off the service's event loop, where the pool can stop it when it runs past its time.
 */
export default function readPage(req: ReadRequest): ReadPage {
  const page = extractor.extract(req.html, req.url);
  const limit = req.scriptFilledBelowChars;
  const scriptFilled = limit !== undefined && /<script\b/i.test(req.html) && normaliseSpace(page.markdown).length < limit && awaitsScript(req.html);
  return { ...page, scriptFilled };
}
