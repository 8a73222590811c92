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
  ])('%s: not followed', (_name, meta) => {
    expect(metaRefreshTarget(page(meta), at)).toBeUndefined();
  });

  it('looks only in the first 16 KiB, and a page of unclosed meta tags costs little', () => {
    expect(metaRefreshTarget(`${' '.repeat(20_000)}<meta http-equiv="refresh" content="0; url=/late">`, at)).toBeUndefined();
    expect(metaRefreshTarget('<meta '.repeat(200_000), at)).toBeUndefined();
  });
});
