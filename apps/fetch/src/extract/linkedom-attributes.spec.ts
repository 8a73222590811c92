import { DOMParser, parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';

// The contract of patches/linkedom@0.18.15.patch: attribute names are read as a browser reads
// them, so every reader of the DOM (the extractor, Readability, turndown) sees `class`, `href`,
// `name` whatever the page's spelling. Unpatched linkedom keeps `CLASS` and matches names exactly.
describe('linkedom attribute names (patched)', () => {
  it('lowercases the attribute names of HTML elements, as a browser parses them', () => {
    const { document } = parseHTML('<html LANG=ro><body><DIV ID=box CLASS=note Data-Role=main ARIA-Hidden=true>x</DIV></body></html>');
    const div = document.getElementById('box');
    expect(div).not.toBeNull();
    expect(div!.getAttributeNames()).toEqual(['id', 'class', 'data-role', 'aria-hidden']);
    expect(div!.className).toBe('note');
    expect(div!.getAttribute('data-role')).toBe('main');
    expect(document.querySelector('.note[aria-hidden="true"]')).toBe(div);
    expect(document.documentElement.getAttribute('lang')).toBe('ro');
    expect(div!.outerHTML).toBe('<div id="box" class="note" data-role="main" aria-hidden="true">x</div>');
  });

  it('keeps the first of two attributes whose names are equal once lowercased', () => {
    const { document } = parseHTML('<html><body><p CLASS=first class=second Class=third ID=a id=b>x</p></body></html>');
    const p = document.querySelector('p')!;
    expect(p.getAttributeNames()).toEqual(['class', 'id']);
    expect(p.className).toBe('first');
    expect(p.id).toBe('a');
  });

  it('lowercases only HTML: SVG elements and XML documents keep their spelling', () => {
    const { document } = parseHTML(
      '<html><body><P ID=before>a</P><svg viewBox="0 0 10 10" preserveAspectRatio=none><linearGradient gradientUnits=userSpaceOnUse></linearGradient></svg><P ID=after>b</P></body></html>',
    );
    const svg = document.querySelector('svg')!;
    expect(svg.getAttribute('viewBox')).toBe('0 0 10 10');
    expect(svg.getAttributeNames()).toEqual(['viewBox', 'preserveAspectRatio']);
    expect(svg.firstElementChild!.getAttributeNames()).toEqual(['gradientUnits']);
    // Back in HTML after the </svg>.
    expect(document.getElementById('before')?.textContent).toBe('a');
    expect(document.getElementById('after')?.textContent).toBe('b');
    const xml = new DOMParser().parseFromString('<root><item ID="1" camelCase="y"/></root>', 'text/xml');
    expect(xml.querySelector('item')!.getAttributeNames()).toEqual(['ID', 'camelCase']);
  });

  it('lowercases in markup set through innerHTML too (Readability puts a page back that way)', () => {
    const { document } = parseHTML('<html><body><div></div></body></html>');
    const div = document.querySelector('div')!;
    div.innerHTML = '<A HREF="/x" Title=t>link</A>';
    expect(div.firstElementChild!.getAttributeNames()).toEqual(['href', 'title']);
  });
});
