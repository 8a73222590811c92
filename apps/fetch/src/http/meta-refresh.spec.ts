import { describe, expect, it } from 'vitest';
import { metaRefreshTarget } from './meta-refresh.js';

const at = new URL('https://news.test/old/story?id=1');
const page = (meta: string) => `<!doctype html><html><head><title>Moved</title>${meta}</head><body><p>This page has moved.</p></body></html>`;

describe('metaRefreshTarget', () => {
  it.each([
    ['<meta http-equiv="refresh" content="0; url=/new/story">', 'https://news.test/new/story'],
    ["<meta http-equiv='Refresh' content='0;URL=https://other.test/a'>", 'https://other.test/a'],
    ['<META HTTP-EQUIV="REFRESH" CONTENT="3;URL=story-2">', 'https://news.test/old/story-2'],
    ['<meta content="0; url=\'/quoted\'" http-equiv="refresh">', 'https://news.test/quoted'],
    ['<meta http-equiv=refresh content="5, /comma">', 'https://news.test/comma'],
    // As browsers read it (HTML's shared declarative refresh steps): white space alone separates,
    // a fraction is ignored, a quoted URL ends at its quote, a bare `url` that is not `url=` is the URL.
    ['<meta http-equiv="refresh" content="0 /spaced">', 'https://news.test/spaced'],
    ['<meta http-equiv="refresh" content=".5; url=/fraction">', 'https://news.test/fraction'],
    ['<meta http-equiv="refresh" content="2.9;url = \'/quoted-then-more\' and more">', 'https://news.test/quoted-then-more'],
    ['<meta http-equiv="refresh" content="0; urlish">', 'https://news.test/old/urlish'],
  ])('%s → %s', (meta, target) => {
    expect(metaRefreshTarget(page(meta), at)).toBe(target);
  });

  it.each([
    ['a later refresh (a page that reloads itself now and then)', '<meta http-equiv="refresh" content="300; url=/front">'],
    ['a refresh with no URL (reload in place)', '<meta http-equiv="refresh" content="0">'],
    ['a refresh to the page itself', '<meta http-equiv="refresh" content="0; url=/old/story?id=1#top">'],
    ['a refresh to javascript:', '<meta http-equiv="refresh" content="0; url=javascript:alert(1)">'],
    ['a refresh to file:', '<meta http-equiv="refresh" content="0; url=file:///etc/passwd">'],
    ['another meta', '<meta name="refresh" content="0; url=/x">'],
    ['a delay that is not a number', '<meta http-equiv="refresh" content="soon; url=/x">'],
    ['a delay followed by something other than a separator', '<meta http-equiv="refresh" content="0x; url=/x">'],
  ])('%s: not followed', (_name, meta) => {
    expect(metaRefreshTarget(page(meta), at)).toBeUndefined();
  });

  it('looks only in the first 16 KiB, and a page of unclosed meta tags costs little', () => {
    expect(metaRefreshTarget(`${' '.repeat(20_000)}<meta http-equiv="refresh" content="0; url=/late">`, at)).toBeUndefined();
    expect(metaRefreshTarget('<meta '.repeat(200_000), at)).toBeUndefined();
  });

  // The attack: the pattern this replaced took 9 s on a 4 KB value of tabs and commas and two
  // minutes on this 8 KB one, on the service's event loop (the head allows 16 KB). One pass now.
  it('a refresh value of 8 KB of white space and commas is read in one pass', () => {
    const value = `0,${'\t'.repeat(4_000)},${'\t'.repeat(4_000)}".`;
    // As a browser reads it: a URL of the rest (`,` then the tabs, which URL parsing drops, then `".`).
    expect(metaRefreshTarget(page(`<meta http-equiv="refresh" content='${value}'>`), at)).toBe(new URL(',".', at).href);
  });
});
