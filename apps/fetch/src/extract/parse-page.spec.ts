import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH, parsePage } from './parse-page.js';

/** The deepest element's depth, <html> being 1. */
function depthOf(document: Document): number {
  let max = 0;
  const stack: Array<[Element, number]> = [[document.documentElement, 1]];
  while (stack.length > 0) {
    const [el, depth] = stack.pop()!;
    max = Math.max(max, depth);
    for (let c = el.firstElementChild; c; c = c.nextElementSibling) stack.push([c, depth + 1]);
  }
  return max;
}

describe('parsePage: nesting bounded as Chromium bounds it', () => {
  it('a page within the bound is parsed as it is', () => {
    const html = `<html><head><title>t</title></head><body>${'<div class="a">x'.repeat(300)}<p>end</p>${'</div>'.repeat(300)}</body></html>`;
    const document = parsePage(html);
    expect(depthOf(document)).toBe(303);
    expect(document.documentElement.outerHTML).toBe(html);
  });

  it('past it, elements follow the element at the bound in document order, with their text; none is lost', () => {
    const depth = 5_000;
    const html = `<html><body>${Array.from({ length: depth }, (_, i) => `<div id="d${i}">${i} `).join('')}<p>end</p>${'</div>'.repeat(depth)}</body></html>`;
    const document = parsePage(html);
    expect(depthOf(document)).toBe(MAX_NESTING_DEPTH);
    expect(document.querySelectorAll('div').length).toBe(depth);
    expect(document.body.textContent).toBe(`${Array.from({ length: depth }, (_, i) => `${i} `).join('')}end`);
    const ids = Array.from(document.querySelectorAll('div'), (d) => d.id);
    expect(ids).toEqual(Array.from({ length: depth }, (_, i) => `d${i}`));
  });
});
