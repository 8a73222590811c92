import { describe, expect, it } from 'vitest';
import { isOnionUrl, pageAge, toResult } from './searx-result.mapper.js';

describe('pageAge', () => {
  it('reads Debian searx 1.1 pubdate', () => {
    expect(pageAge({ url: 'u', title: 't', pubdate: '2026-11-28 12:24:01+0000', publishedDate: 'Nov 28, 2026' })).toBe('2026-11-28');
  });
  it('reads SearXNG ISO publishedDate', () => {
    expect(pageAge({ url: 'u', title: 't', publishedDate: '2026-09-23T08:00:00' })).toBe('2026-09-23');
  });
  it('is null when the engine gave no date or a human one only', () => {
    expect(pageAge({ url: 'u', title: 't' })).toBeNull();
    expect(pageAge({ url: 'u', title: 't', publishedDate: '2 hour(s), 0 minute(s) ago', pubdate: null })).toBeNull();
  });
});

describe('toResult', () => {
  it('keeps only engines that were asked; none asked → not ours', () => {
    const asked = new Set(['a', 'b']);
    expect(toResult({ url: 'u', title: 't', content: 'c', engines: ['x', 'b'] }, asked)).toMatchObject({ source: 'b', engines: ['b'], snippet: 'c', verified: false });
    expect(toResult({ url: 'u', title: 't', engines: ['x'] }, asked)).toBeNull();
  });

  it('gives a result SearXNG sent without a title or content empty strings', () => {
    expect(toResult({ url: 'u', content: null, engines: ['a'] }, new Set(['a']))).toMatchObject({ title: '', snippet: '' });
  });
});

describe('isOnionUrl', () => {
  it('looks at the host only', () => {
    expect(isOnionUrl('http://abcdefghijklmnop.onion/x')).toBe(true);
    expect(isOnionUrl('https://example.com/a.onion')).toBe(false);
    expect(isOnionUrl('not a url')).toBe(false);
  });
});
