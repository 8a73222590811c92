import { describe, expect, it } from 'vitest';
import { markdownToText, tokenF1 } from './text-f1.js';

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
