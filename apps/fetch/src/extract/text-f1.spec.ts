import { describe, expect, it } from 'vitest';
import { macroF1, markdownToText, shingleF1, tokenF1 } from './text-f1.js';

describe('tokenF1', () => {
  it('scores markdown by its words: link text, image alt and code count, syntax does not', () => {
    const md = '## Title\n\n- [a link](https://x.example/) and ![an image](i.png)\n\n```js\nlet x\n```';
    expect(tokenF1(markdownToText(md), 'Title a link and an image let x').f1).toBe(1);
  });

  it('counts precision and recall by token bag, one token per character in scripts without spaces', () => {
    const half = tokenF1('alpha beta', 'alpha beta gamma delta');
    expect(half.precision).toBe(1);
    expect(half.recall).toBe(0.5);
    expect(half.f1).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('東京都', '東京').recall).toBe(1);
    expect(tokenF1('東京都', '東京').precision).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('', 'something').f1).toBe(0);
  });
});

describe('shingleF1', () => {
  it('scores runs of four tokens, so the same words in another order are extra text', () => {
    const article = 'the bridge reopened on monday after three weeks';
    expect(shingleF1(article, article)).toEqual({ precision: 1, recall: 1, f1: 1 });
    // Same bag of words, no shared four-token run.
    const shuffled = shingleF1('monday the after bridge weeks reopened three on', article);
    expect(tokenF1('monday the after bridge weeks reopened three on', article).f1).toBe(1);
    expect(shuffled.f1).toBe(0);
    // Navigation before the article: every article shingle found, 3 of 8 extracted ones extra.
    const withNav = shingleF1(`home news sport ${article}`, article);
    expect(withNav.recall).toBe(1);
    expect(withNav.precision).toBeCloseTo(5 / 8, 10);
  });

  it('counts a repeated shingle only as often as expected, treats short texts as one shingle', () => {
    // abcd bcda cdab dabc abcd: one of five is right (abcd is expected once).
    expect(shingleF1('a b c d a b c d', 'a b c d').precision).toBeCloseTo(1 / 5, 10);
    expect(shingleF1('ja nein', 'ja nein')).toEqual({ precision: 1, recall: 1, f1: 1 });
    expect(shingleF1('', 'some expected text here')).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it('macro-averages precision and recall over pages and takes the F1 of the means', () => {
    const m = macroF1([
      { precision: 1, recall: 0.5, f1: 2 / 3 },
      { precision: 0.5, recall: 1, f1: 2 / 3 },
    ]);
    expect(m.precision).toBe(0.75);
    expect(m.recall).toBe(0.75);
    expect(m.f1).toBe(0.75);
  });
});
