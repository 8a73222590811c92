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
});
