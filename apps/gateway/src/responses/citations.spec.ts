import { describe, expect, it } from 'vitest';
import { citationsOf } from './citations.js';

const sources = [
  { url: 'https://example.com/a', title: 'A' },
  { url: 'https://example.com/a/b', title: 'AB' },
];

describe('url citations', () => {
  it('cites bare URLs and whole markdown links the tools returned, with exact offsets', () => {
    const text = 'See https://example.com/a and [deep](https://example.com/a/b).';
    const cites = citationsOf(text, sources);
    expect(cites.map((c) => text.slice(c.start_index, c.end_index))).toEqual(['https://example.com/a', '[deep](https://example.com/a/b)']);
    expect(cites.map((c) => c.title)).toEqual(['A', 'AB']);
  });

  it('never cites a URL no tool returned', () => {
    expect(citationsOf('Made up: https://nowhere.example/x', sources)).toEqual([]);
  });

  it('a longer source URL is not also cited as its shorter prefix', () => {
    const cites = citationsOf('Only https://example.com/a/b here', sources);
    expect(cites).toHaveLength(1);
    expect(cites[0]!.url).toBe('https://example.com/a/b');
  });

  it('a link around text, several sources and repeated mentions: every mention cited once, in order', () => {
    const text = 'First [the A page](https://example.com/a), then https://example.com/a/b twice: https://example.com/a/b. [x] and ](https://example.com/a)';
    const cites = citationsOf(text, sources);
    expect(cites.map((c) => [text.slice(c.start_index, c.end_index), c.url])).toEqual([
      ['[the A page](https://example.com/a)', 'https://example.com/a'],
      ['https://example.com/a/b', 'https://example.com/a/b'],
      ['https://example.com/a/b', 'https://example.com/a/b'],
      ['[x] and ](https://example.com/a)', 'https://example.com/a'],
    ]);
  });

  it('a text repeating a returned URL past the bound gets the first 1,000 mentions cited, no more', () => {
    // The audit's attack (1 MiB of one link's tail, or of the bare URL): each mention was checked
    // against every citation before it, and its `[` looked for back to the start.
    const url = 'https://a.co/';
    for (const unit of [`](${url}) `, `${url} `]) {
      const text = unit.repeat(Math.ceil(1_048_576 / unit.length));
      const cites = citationsOf(text, [{ url, title: 't' }]);
      expect(cites).toHaveLength(1000);
      expect(cites.every((c, i) => text.slice(c.start_index, c.end_index) === url && c.start_index === i * unit.length + unit.indexOf(url))).toBe(true);
    }
  });
});
