import { describe, expect, it } from 'vitest';
import { classifyIntent } from './intent.classifier.js';

describe('classifyIntent', () => {
  it.each([
    ['curs BNR euro azi', 'currency'],
    ['100 usd to eur', 'currency'],
    ['euro exchange rate', 'currency'],
    ['weather in Bucharest tomorrow', 'weather'],
    ['what time is it in Tokyo', 'time'],
    ['define serendipity', 'definition'],
    ['how to reset a git branch', 'how_to'],
    ['TypeError: cannot read properties of undefined', 'code'],
    ['latest news on the election', 'news'],
    ['github.com', 'navigational'],
    ['who wrote Dune?', 'question'],
    ['red bicycles', 'general'],
  ] as const)('%s → %s', (query, intent) => {
    expect(classifyIntent(query)).toBe(intent);
  });

  it('ignores case and spacing', () => {
    expect(classifyIntent('  CURS   bnr EURO ')).toBe(classifyIntent('curs bnr euro'));
  });
});
