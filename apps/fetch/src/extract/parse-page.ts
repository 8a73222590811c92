import { parseHTML } from 'linkedom';

/**
 * The deepest an element may stand, counting <html> as 1: Chromium's HTML parser's own limit
 * (kMaximumHTMLParserDOMTreeDepth). A browser never builds a deeper DOM, so the browser path's
 * pages are already bounded by it; the HTTP path's are bounded here the same way.
 */
export const MAX_NESTING_DEPTH = 512;

/**
 * A page's HTML as a document, no element nested deeper than MAX_NESTING_DEPTH. Past it, elements
 * are lifted to follow the element at the limit, in document order, each with its own text, as
 * Chromium's parser places elements past its limit. Without the bound a hostile page of a few
 * kilobytes (a thousand `<div>`s, one inside the next) held the service's event loop for seconds
 * in Readability, whose cost grows faster than the square of the depth, and a few thousand
 * exhausted the stack of every recursive walk (linkedom's, Readability's, turndown's).
 */
export function parsePage(html: string): Document {
  const { document } = parseHTML(html);
  capNestingDepth(document, MAX_NESTING_DEPTH);
  return document;
}

/** Lifts every element deeper than `max` (see parsePage); answers how many were moved. */
export function capNestingDepth(document: Document, max: number): number {
  const root = document.documentElement;
  if (!root) return 0;
  // The elements at the limit that hold elements: what is below them is lifted. An explicit stack,
  // not recursion: the page is not bounded yet.
  const atLimit: Element[] = [];
  const stack: Array<{ el: Element; depth: number }> = [{ el: root, depth: 1 }];
  while (stack.length > 0) {
    const { el, depth } = stack.pop()!;
    if (depth === max) {
      if (el.firstElementChild) atLimit.push(el);
      continue;
    }
    for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push({ el: c, depth: depth + 1 });
  }
  let lifted = 0;
  for (const anchor of atLimit) {
    const below = Array.from(anchor.querySelectorAll('*'));
    // Last first, each put right after the anchor: they end in document order, and each moves
    // with nothing below it any more (its descendants went before it), so a move stays cheap.
    for (let i = below.length - 1; i >= 0; i--) anchor.after(below[i]!);
    lifted += below.length;
  }
  return lifted;
}
