import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// One page written twice: attribute names in lower case, and in upper/mixed case as legacy and
// generated pages write them. Chromium lowercases them while parsing, so the browser path reads
// both alike; the HTTP path parses with linkedom, patched (patches/linkedom@0.18.15.patch) to
// do the same. Every answer must be the same page.
const paragraphs = (text: string, n: number) => Array.from({ length: n }, (_, i) => `<p>${text} (${i + 1}), with more words, so that it counts.</p>`).join('');
const STORY = paragraphs('The harbour master explained how the tide tables are computed for the coming season', 4);
const SIDEBAR = paragraphs('Other stories from the harbour desk and the weather office', 3);
const COMMENTS = paragraphs('A reader wrote that the tides, the moon, the wind, and the pressure, all matter here', 8);

const LOWER =
  '<!doctype html><html lang="en"><head><title>Tide tables</title><meta name="description" content="When the water comes">' +
  '<meta name="author" content="Ines Duarte"><link rel="canonical" href="/tides"></head><body><div id="page">' +
  `<div class="sidebar" id="related">${SIDEBAR}</div>` +
  `<div class="article-body" id="story"><h1>Tide tables</h1>${STORY}<p>See <a href="../charts">the charts</a> and <img src="img/tide.png" alt="A tide chart"></p>` +
  '<p hidden>Hidden by attribute.</p><p style="display:none">Hidden by style.</p></div>' +
  `<div class="comments" id="comments">${COMMENTS}</div></div></body></html>`;

const UPPER =
  '<!DOCTYPE html><HTML LANG="en"><HEAD><TITLE>Tide tables</TITLE><META NAME="Description" CONTENT="When the water comes">' +
  '<Meta Name="author" Content="Ines Duarte"><LINK REL="Canonical" HREF="/tides"></HEAD><BODY><DIV ID="page">' +
  `<DIV CLASS="sidebar" ID="related">${SIDEBAR}</DIV>` +
  `<DIV Class="article-body" Id="story"><H1>Tide tables</H1>${STORY}<P>See <A HREF="../charts">the charts</A> and <IMG SRC="img/tide.png" ALT="A tide chart"></P>` +
  '<P HIDDEN>Hidden by attribute.</P><P STYLE="display:none">Hidden by style.</P></DIV>' +
  `<DIV CLASS="comments" ID="comments">${COMMENTS}</DIV></DIV></BODY></HTML>`;

let site: FixtureServer;
let runtime: FetchRuntime;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => html(res, req.url?.startsWith('/news/upper') ? UPPER : LOWER));
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

const read = async (path: string, render: 'http' | 'browser') => {
  const { title, byline, description, canonical, lang, content } = await runtime.pages.fetch({ url: site.url(path), render });
  return { title, byline, description, canonical, lang, content };
};

describe('attribute names in upper case', () => {
  it('the HTTP path reads the upper-case page as the lower-case one, and as Chromium reads it', async () => {
    const lowerHttp = await read('/news/lower', 'http');
    expect(lowerHttp).toMatchObject({
      title: 'Tide tables',
      byline: 'Ines Duarte',
      description: 'When the water comes',
      canonical: site.url('/tides'),
      lang: 'en',
    });
    expect(lowerHttp.content).toContain(`[the charts](${site.url('/charts')})`);
    expect(lowerHttp.content).toContain(`![A tide chart](${site.url('/news/img/tide.png')})`);
    for (const gone of ['Other stories', 'A reader wrote', 'Hidden by']) expect(lowerHttp.content).not.toContain(gone);

    expect(await read('/news/upper', 'http')).toEqual(lowerHttp);
    // Chromium's own parse of the upper-case page (the browser path hands its DOM to the same extractor).
    expect(await read('/news/upper', 'browser')).toEqual(lowerHttp);
  });
});
