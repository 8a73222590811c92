import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';
import { loadPages, servePages } from './support/page-fixtures.js';
import { markdownToText, tokenF1 } from '../src/extract/text-f1.js';

// Extraction quality on the fixture set (test/fixtures/pages: articles, docs, forums, Q&A,
// JS-rendered pages, a bot challenge, seven languages), fetched through the service with
// render: auto, as POST /v1/tools/fetch does.
const pages = loadPages();
let site: FixtureServer;
let runtime: FetchRuntime;
const scores: Record<string, number> = {};

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, servePages(pages));
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false });
  await runtime.browser!.warm();
});

afterAll(async () => {
  const rows = Object.entries(scores).map(([name, f1]) => `${name.padEnd(24)} ${f1.toFixed(3)}`);
  console.log(`extraction F1 per page:\n${rows.join('\n')}`);
  await runtime?.close();
  await site?.close();
});

describe('extraction', () => {
  it('the fixture set has at least 20 pages', () => {
    expect(pages.length).toBeGreaterThanOrEqual(20);
  });

  it.each(pages.map((p) => [p.name, p] as const))('%s', async (_name, page) => {
    const got = await runtime.pages.fetch({ url: site.url(`/pages/${page.name}`) });
    const score = tokenF1(markdownToText(got.content), page.expected);
    scores[page.name] = score.f1;
    // A floor per page (Readability still drops a Q&A question block: qa-page sits near 0.82),
    // and the set's mean below is held to the 0.95 target.
    expect(score.f1, `precision ${score.precision.toFixed(3)} recall ${score.recall.toFixed(3)}`).toBeGreaterThanOrEqual(0.8);
    for (const key of ['title', 'byline', 'canonical', 'lang', 'description'] as const) {
      if (page.meta[key] !== undefined) expect(got[key]).toBe(page.meta[key]);
    }
  });

  it('mean F1 over the set is at least 0.95', () => {
    const values = Object.values(scores);
    expect(values.length).toBe(pages.length);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(mean).toBeGreaterThanOrEqual(0.95);
  });
});
