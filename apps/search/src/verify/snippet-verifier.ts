import type { PageReader } from './page-reader.js';

/** present: the snippet is on the live page; absent: the page was read and it is not there; unknown: not read. */
export type Verdict = 'present' | 'absent' | 'unknown';

/** Letters and digits only, lower case, single spaces: markup, punctuation and markdown do not matter. */
function comparable(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

// Engines cut snippets with an ellipsis; each side of a cut is checked on its own.
const CUTS = /\s*(?:…|\.\.\.)\s*/;
// A fragment shorter than this proves nothing (a word or two is on many pages).
const MIN_FRAGMENT_WORDS = 3;
// The fragments looked for: each is searched for in the whole page (up to 200,000 characters), and a
// snippet relayed from an engine has no length of its own: 43,691 fragments (a 256 KB snippet of
// short cuts) took 13 s of the service's loop. An engine's snippet has two or three; a few distinct
// ones prove it was on the page as well as all would.
export const MAX_FRAGMENTS_CHECKED = 8;

/** The fragments of a snippet worth looking for (distinct, the first MAX_FRAGMENTS_CHECKED), or none when the snippet is too short to check. */
export function snippetFragments(snippet: string): string[] {
  const fragments = new Set<string>();
  for (const piece of snippet.split(CUTS)) {
    const f = comparable(piece);
    if (f.split(' ').length < MIN_FRAGMENT_WORDS) continue;
    fragments.add(f);
    if (fragments.size === MAX_FRAGMENTS_CHECKED) break;
  }
  return [...fragments];
}

export function snippetOnPage(snippet: string, pageText: string): Verdict {
  const fragments = snippetFragments(snippet);
  if (fragments.length === 0) return 'unknown';
  const page = comparable(pageText);
  return fragments.every((f) => page.includes(f)) ? 'present' : 'absent';
}

export interface VerifyItem {
  url: string;
  snippet: string;
}

/**
 * Checks snippets against their live pages, bounded in time (one budget for the whole search) and
 * in concurrency. Items are checked in order, and checking stops once `wanted` items are known to
 * be present or unchecked-but-kept, so a search for 3 results does not read 20 pages.
 * Returns one verdict per item; items never reached are `unknown`.
 */
export class SnippetVerifier {
  private readonly slots: Slots;

  constructor(
    private readonly reader: PageReader,
    private readonly budgetMs: number,
    private readonly concurrency: number,
    /** Page reads in flight for all searches of this process together. */
    maxInFlight = concurrency * 4,
  ) {
    this.slots = new Slots(maxInFlight);
  }

  async verify(items: readonly VerifyItem[], wanted: number): Promise<Verdict[]> {
    const verdicts: Verdict[] = items.map(() => 'unknown');
    const deadline = Date.now() + this.budgetMs;
    let next = 0;
    let kept = 0;

    const worker = async () => {
      for (;;) {
        if (kept >= wanted || next >= items.length) return;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return;
        const i = next++;
        const item = items[i]!;
        const verdict = await this.check(item, remaining);
        verdicts[i] = verdict;
        if (verdict !== 'absent') kept++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, items.length) }, worker));
    return verdicts;
  }

  private async check(item: VerifyItem, timeoutMs: number): Promise<Verdict> {
    if (snippetFragments(item.snippet).length === 0) return 'unknown';
    const started = Date.now();
    if (!(await this.slots.acquire(timeoutMs))) return 'unknown';
    try {
      const left = timeoutMs - (Date.now() - started);
      if (left <= 0) return 'unknown';
      return snippetOnPage(item.snippet, await this.reader.read(item.url, left));
    } catch {
      // Unreachable page, fetch refused it, fetch service down or out of time: not known.
      return 'unknown';
    } finally {
      this.slots.release();
    }
  }
}

/** A counting semaphore whose waiters give up after a deadline. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  acquire(timeoutMs: number): Promise<boolean> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiting.push(grant);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
