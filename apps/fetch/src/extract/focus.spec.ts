import { describe, expect, it } from 'vitest';
import { applyFocus, truncate } from './focus.js';

const page = [
  '# Runtime 24',
  'Runtime 24 is released today.',
  '## Module customization hooks',
  'The synchronous module hooks are now stable.',
  'Loaders no longer need a worker thread.',
  '## Permission model',
  'Processes may only read granted paths.',
  '## Test runner',
  'Subtests are awaited automatically; loader bugs in mocks were fixed.',
].join('\n\n');

describe('applyFocus', () => {
  it('keeps the blocks about the focus, in page order, under their headings', () => {
    const out = applyFocus(page, 'ESM loader hooks', 10_000);
    expect(out.split('\n\n')).toEqual([
      '# Runtime 24',
      '## Module customization hooks',
      'The synchronous module hooks are now stable.',
      'Loaders no longer need a worker thread.',
      '## Test runner',
      'Subtests are awaited automatically; loader bugs in mocks were fixed.',
    ]);
  });

  it('with a small budget keeps the best blocks first', () => {
    const out = applyFocus(page, 'loader hooks', 60);
    expect(out).toContain('The synchronous module hooks are now stable.');
    expect(out).not.toContain('Permission');
  });

  it('a focus that matches nothing leaves the page whole', () => {
    expect(applyFocus(page, 'quantum chromodynamics', 10_000)).toBe(page);
  });

  it('no focus leaves the page whole', () => {
    expect(applyFocus(page, undefined, 10)).toBe(page);
  });

  it('code fences are never split', () => {
    const md = 'Intro about caching.\n\n```\nline one\n\nline two about caching\n```\n\nUnrelated.';
    expect(applyFocus(md, 'caching', 10_000)).toBe('Intro about caching.\n\n```\nline one\n\nline two about caching\n```');
  });
});

describe('truncate', () => {
  it('cuts at max characters, on a word boundary when near', () => {
    const { text, truncated } = truncate('word '.repeat(40), 98);
    expect(truncated).toBe(true);
    expect(text.length).toBeLessThanOrEqual(98);
    expect(text.endsWith('word')).toBe(true);
    // A long unbroken run is cut where it must be.
    expect(truncate('x'.repeat(50), 20).text).toBe('x'.repeat(20));
  });

  it('leaves short text alone', () => {
    expect(truncate('short', 10)).toEqual({ text: 'short', truncated: false });
  });

  it('prefers a paragraph break in the last quarter, then a sentence end, then a space; says where the next window starts', () => {
    const paragraphs = `${'a'.repeat(80)}\n\n${'b '.repeat(20)}`;
    expect(truncate(paragraphs, 100)).toEqual({ text: 'a'.repeat(80), truncated: true, next: 82 });
    const sentences = `${'word '.repeat(17)}ends here. And then${' more'.repeat(20)}`;
    const cut = truncate(sentences, 100);
    expect(cut.text.endsWith('ends here.')).toBe(true);
    expect(sentences.slice(cut.next)).toMatch(/^And then/);
    // No boundary near the limit: a hard cut, never inside a surrogate pair.
    const emoji = `${'x'.repeat(9)}\u{1F600}${'y'.repeat(20)}`;
    expect(truncate(emoji, 10)).toEqual({ text: 'x'.repeat(9), truncated: true, next: 9 });
  });

  it('an offset reads on from where the last window stopped', () => {
    const text = 'One two three. Four five six. Seven eight nine.';
    const first = truncate(text, 16);
    expect(first.text).toBe('One two three.');
    const second = truncate(text, 16, first.next);
    expect(second.text).toBe('Four five six.');
    const third = truncate(text, 20, second.next);
    expect(third).toEqual({ text: 'Seven eight nine.', truncated: false });
  });
});
