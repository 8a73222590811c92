import { describe, expect, it } from 'vitest';
import { MAX_FRAGMENTS_CHECKED, snippetFragments, snippetOnPage, SnippetVerifier } from './snippet-verifier.js';

describe('snippetOnPage', () => {
  it('finds a snippet whatever the markup, case and punctuation', () => {
    expect(snippetOnPage('1 EUR = 5,0912 RON according to', '## Curs\n\n**1 eur** = 5.0912 RON according to the bank')).toBe('present');
  });
  it('checks each side of an ellipsis on its own', () => {
    expect(snippetOnPage('the first part is here … and the second part too', 'x the first part is here y and the second part too z')).toBe('present');
    expect(snippetOnPage('the first part is here … but this one is not', 'the first part is here')).toBe('absent');
  });
  it('does not judge a snippet too short to prove anything', () => {
    expect(snippetOnPage('Drael', 'nothing')).toBe('unknown');
  });
  it('looks for a few distinct fragments, however many cuts a snippet relayed from an engine holds (each is searched for in the whole page)', () => {
    const hostile = 'a b c … '.repeat(40_000);
    expect(snippetFragments(hostile)).toEqual(['a b c']);
    const many = Array.from({ length: 5_000 }, (_, i) => `fragment number ${i}`).join(' … ');
    expect(snippetFragments(many)).toHaveLength(MAX_FRAGMENTS_CHECKED);
    expect(snippetOnPage(many, Array.from({ length: MAX_FRAGMENTS_CHECKED }, (_, i) => `fragment number ${i}.`).join(' '))).toBe('present');
  });
});

describe('SnippetVerifier', () => {
  const pages: Record<string, string> = { a: 'alpha beta gamma delta', b: 'nothing here at all' };
  const reader = {
    read: async (url: string) => {
      const page = pages[url];
      if (page === undefined) throw new Error('unreachable');
      return page;
    },
  };

  it('gives present, absent and unknown per item', async () => {
    const v = new SnippetVerifier(reader, 1000, 2);
    const items = [
      { url: 'a', snippet: 'alpha beta gamma' },
      { url: 'b', snippet: 'alpha beta gamma' },
      { url: 'c', snippet: 'alpha beta gamma' },
    ];
    expect(await v.verify(items, 10)).toEqual(['present', 'absent', 'unknown']);
  });

  it('stops reading once enough items are kept', async () => {
    const read: string[] = [];
    const v = new SnippetVerifier({ read: async (url) => (read.push(url), pages.a!) }, 1000, 1);
    const items = ['1', '2', '3', '4'].map((url) => ({ url, snippet: 'alpha beta gamma' }));
    expect(await v.verify(items, 2)).toEqual(['present', 'present', 'unknown', 'unknown']);
    expect(read).toEqual(['1', '2']);
  });
});

describe('SnippetVerifier, process-wide bound', () => {
  it('never has more page reads in flight than allowed, across searches', async () => {
    let inFlight = 0;
    let peak = 0;
    const reader = {
      read: async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return 'alpha beta gamma';
      },
    };
    const v = new SnippetVerifier(reader, 5000, 4, 2);
    const items = ['1', '2', '3', '4'].map((url) => ({ url, snippet: 'alpha beta gamma' }));
    const [a, b] = await Promise.all([v.verify(items, 4), v.verify(items, 4)]);
    expect(a).toEqual(['present', 'present', 'present', 'present']);
    expect(b).toEqual(a);
    expect(peak).toBe(2);
  });

  it('a read that cannot get a slot within the budget stays unknown', async () => {
    // a page that never answers: the reader gives up at its timeout, as fetch.page.v1's client does
    const hang = (_url: string, timeoutMs: number) => new Promise<string>((_res, rej) => setTimeout(() => rej(new Error('timeout')), timeoutMs));
    const v = new SnippetVerifier({ read: hang }, 50, 2, 1);
    expect(
      await v.verify(
        [
          { url: '1', snippet: 'alpha beta gamma' },
          { url: '2', snippet: 'alpha beta gamma' },
        ],
        2,
      ),
    ).toEqual(['unknown', 'unknown']);
  });
});
