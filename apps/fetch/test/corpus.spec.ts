import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ALL_RULES, type ContentRules } from '../src/extract/content-rules.js';
import { HtmlExtractor } from '../src/extract/html-extractor.js';
import { macroF1, markdownToText, shingleF1, type F1 } from '../src/extract/text-f1.js';

// The extraction corpus (test/fixtures/corpus, written by bench/fetch/corpus/make-corpus.mjs):
// real-world page shapes with their expected bodies, scored by 4-token shingles, precision and
// recall averaged over pages, F1 of the means (bench/fetch/corpus-score.mjs prints the same
// with speed). The floors are the figures reached, rounded down a little: they may only go up.
const FLOOR = { f1: 0.987, precision: 0.977, recall: 0.996 };
const DIR = fileURLToPath(new URL('./fixtures/corpus/', import.meta.url));
const pages = readdirSync(DIR)
  .filter((f) => f.endsWith('.html'))
  .sort()
  .map((f) => ({ name: f.slice(0, -5), html: readFileSync(`${DIR}${f}`, 'utf8'), expected: readFileSync(`${DIR}${f.slice(0, -5)}.expected.txt`, 'utf8') }));

function score(rules: Partial<ContentRules>): { total: F1; pages: Record<string, F1> } {
  const extractor = new HtmlExtractor(rules);
  const per: Record<string, F1> = {};
  for (const p of pages) per[p.name] = shingleF1(markdownToText(extractor.extract(p.html, `https://corpus.example/${p.name}`).markdown), p.expected);
  return { total: macroF1(Object.values(per)), pages: per };
}

describe('extraction corpus', () => {
  const all = score(ALL_RULES);

  it('holds at least 60 page shapes', () => {
    expect(pages.length).toBeGreaterThanOrEqual(60);
  });

  it(`scores at least F1 ${FLOOR.f1} (precision ${FLOOR.precision}, recall ${FLOOR.recall})`, () => {
    const worst = Object.entries(all.pages)
      .sort((a, b) => a[1].f1 - b[1].f1)
      .slice(0, 5)
      .map(([n, s]) => `${n} ${s.f1.toFixed(3)}`)
      .join(', ');
    const { precision, recall, f1 } = all.total;
    expect(f1, `precision ${precision.toFixed(4)} recall ${recall.toFixed(4)}; worst: ${worst}`).toBeGreaterThanOrEqual(FLOOR.f1);
    expect(precision).toBeGreaterThanOrEqual(FLOOR.precision);
    expect(recall).toBeGreaterThanOrEqual(FLOOR.recall);
  });

  // Each rule beyond Readability earns its place: without it the corpus scores lower.
  it.each(Object.keys(ALL_RULES) as (keyof ContentRules)[])('the %s rule gains on the corpus', (rule) => {
    expect(score({ [rule]: false }).total.f1).toBeLessThan(all.total.f1);
  });
});
