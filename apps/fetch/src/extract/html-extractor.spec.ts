import { describe, expect, it } from 'vitest';
import { HtmlExtractor } from './html-extractor.js';

const extractor = new HtmlExtractor();
const body = (inner: string) =>
  `<!doctype html><html lang="de"><head><title>Titel</title><meta name="description" content="Kurz"><link rel="canonical" href="/kanon"></head>` +
  `<body><nav><a href="/">Start</a></nav><article><h1>Titel</h1>${'<p>Ein Absatz mit genug Text, damit Readability ihn als Inhalt erkennt und behält.</p>'.repeat(6)}${inner}</article></body></html>`;

/**
 * The same markup with every attribute name upper-cased (and a few mixed-case), as legacy and
 * generated pages write it; values untouched. Not for SVG, whose names keep their case.
 */
const shout = (html: string) =>
  html.replace(/<([a-zA-Z][a-zA-Z0-9]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)(\s*\/?)>/g, (_tag, name: string, attrs: string, end: string) => {
    const named = attrs.replace(
      /(\s+)([^\s=/>]+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g,
      (_a, space: string, attr: string, value = '') => space + (attr.length % 2 ? attr.toUpperCase() : attr[0]!.toUpperCase() + attr.slice(1)) + value,
    );
    return `<${name.toUpperCase()}${named}${end}>`;
  });

describe('HtmlExtractor', () => {
  it('resolves links and images against the page, in every spelling', () => {
    const { markdown } = extractor.extract(
      body(
        '<p>Siehe <a href="/docs/a?x=1">eins</a>, <a href="../b">zwei</a>, <a href="c d">drei</a>, <a href="https://other.example/x">vier</a>, ' +
          '<a href="//cdn.example/y">fünf</a>, <a href="/p/./q">sechs</a> und <a href="javascript:alert(1)">sieben</a>.</p><img src="img/z.png" alt="Bild">',
      ),
      'https://site.example/blog/post/',
    );
    expect(markdown).toContain('[eins](https://site.example/docs/a?x=1)');
    expect(markdown).toContain('[zwei](https://site.example/blog/b)');
    expect(markdown).toContain('[drei](https://site.example/blog/post/c%20d)');
    expect(markdown).toContain('[vier](https://other.example/x)');
    expect(markdown).toContain('[fünf](https://cdn.example/y)');
    expect(markdown).toContain('[sechs](https://site.example/p/q)');
    expect(markdown).toContain('sieben');
    expect(markdown).not.toContain('javascript:');
    expect(markdown).toContain('![Bild](https://site.example/blog/post/img/z.png)');
  });

  it('reads title, description, canonical and lang from the page', () => {
    const page = extractor.extract(body(''), 'https://site.example/a');
    expect(page).toMatchObject({ title: 'Titel', description: 'Kurz', canonical: 'https://site.example/kanon', lang: 'de', readable: true });
    expect(page.markdown.startsWith('# Titel')).toBe(true);
  });

  it('falls back to the whole page when there is no plausible article', () => {
    const page = extractor.extract('<html><body><nav>Menu</nav><div><b>Open</b> 9–17</div><p>Closed on Sundays.</p></body></html>', 'https://x.example/');
    expect(page.readable).toBe(false);
    expect(page.markdown).toContain('**Open** 9–17');
    expect(page.markdown).toContain('Closed on Sundays.');
    expect(page.markdown).not.toContain('Menu');
  });

  // The visibility check and the element lookups are Readability's steps done the cheaper way
  // (makeReader): hidden content must still go, styled-but-visible content must stay.
  it('drops hidden content (style, hidden, aria-hidden) and keeps visible styled content', () => {
    const { markdown } = extractor.extract(
      body(
        '<p style="display: none">Versteckt per Stil.</p><p style="visibility:hidden">Unsichtbar per Stil.</p>' +
          '<p hidden>Versteckt per Attribut.</p><p aria-hidden="true">Versteckt per ARIA.</p>' +
          '<p style="color: red">Rot und sichtbar.</p><p aria-hidden="false">Sichtbar trotz ARIA.</p>' +
          // an icon: SVG's className is an object, not a string
          '<p>Mit Symbol <svg aria-hidden="true" class="icon"><path d="M0 0"/></svg> im Text.</p>',
      ),
      'https://site.example/a',
    );
    expect(markdown).toContain('Rot und sichtbar.');
    expect(markdown).toContain('Sichtbar trotz ARIA.');
    expect(markdown).toContain('Mit Symbol');
    for (const hidden of ['Versteckt per Stil', 'Unsichtbar per Stil', 'Versteckt per Attribut', 'Versteckt per ARIA']) expect(markdown).not.toContain(hidden);
  });

  it('scopes to a lone dominant <article> and still returns the page around a listing of several', () => {
    const around = `<aside>${'<p>Ein Seitenkasten mit anderen Geschichten, die hier nicht hingehören.</p>'.repeat(2)}</aside>`;
    const single = extractor.extract(body('').replace('</article>', `</article>${around}`), 'https://site.example/a');
    expect(single.readable).toBe(true);
    expect(single.markdown).toContain('Ein Absatz mit genug Text');
    expect(single.markdown).not.toContain('Seitenkasten');

    const teaser = (n: number) => `<article><h2>Beitrag ${n}</h2>${'<p>Ein Beitrag in einer Liste mit mehreren Beiträgen und genug Text.</p>'.repeat(3)}</article>`;
    const listing = extractor.extract(`<html><body><main>${[1, 2, 3].map(teaser).join('')}</main></body></html>`, 'https://site.example/liste');
    for (const n of [1, 2, 3]) expect(listing.markdown).toContain(`Beitrag ${n}`);
  });

  // Readability retries with looser rules when its first pick is too short, putting the page
  // back first; the patched Readability has extract() rebuild that page state only then
  // (pageRestorer). Here the first pick strips the text (its class reads "comment", an unlikely
  // candidate), so the text is only there if the page was put back whole, <br> runs as paragraphs.
  it('finds the text on a retry, with the page put back as it was before the first pick', () => {
    const text = 'Der eigentliche Text steht in einem Kasten, den die erste Runde als Kommentar verwirft.';
    const page = extractor.extract(
      `<html><head><title>Zweiter Versuch</title><script>var x = 1;</script></head><body><div class="comment">` +
        `${`<p>${text}</p>`.repeat(3)}Erste Zeile nach dem Absatz.<br><br>Zweite Zeile, eigener Absatz.` +
        `<noscript><p>Nur ohne Skript.</p></noscript></div><div>Kurz.</div></body></html>`,
      'https://x.example/',
    );
    expect(page.readable).toBe(true);
    expect(page.markdown.split(text).length - 1).toBe(3);
    expect(page.markdown).toContain('Erste Zeile nach dem Absatz.\n\nZweite Zeile, eigener Absatz.');
    expect(page.markdown).not.toContain('Nur ohne Skript');
    expect(page.markdown).not.toContain('var x');
  });

  it('reads pages without a <body> tag (valid HTML), fragments, plain text and an empty body', () => {
    const noBody = extractor.extract('<!doctype html><html lang="de"><title>Ohne Body</title><meta name="description" content="Kurz"><p>Ein <b>Absatz</b> ohne body.</p></html>', 'https://x.example/');
    expect(noBody).toMatchObject({ title: 'Ohne Body', description: 'Kurz', lang: 'de' });
    expect(noBody.markdown).toBe('Ein **Absatz** ohne body.');
    expect(extractor.extract('<p>Nur ein <b>Fragment</b>.</p>', 'https://x.example/').markdown).toBe('Nur ein **Fragment**.');
    expect(extractor.extract('nur Text', 'https://x.example/').markdown).toBe('nur Text');
    expect(extractor.extract('', 'https://x.example/')).toMatchObject({ markdown: '', title: null, readable: false });
  });

  // linkedom is patched (patches/linkedom@0.18.15.patch) to lowercase the attribute names of
  // HTML elements at parse time, as a browser does; unpatched, none of these names was found.
  it('reads metadata written with upper- and mixed-case attribute names', () => {
    const page = extractor.extract(
      '<!DOCTYPE html><HTML LANG=ro><HEAD><TITLE>Titlu</TITLE><META NAME=Description CONTENT="Pe scurt"><Meta Name=AUTHOR Content="Ana Pop">' +
        '<LINK REL=Canonical HREF="/canonic"></HEAD><BODY><P>Un paragraf.</P></BODY></HTML>',
      'https://site.example/a/b',
    );
    expect(page).toMatchObject({ title: 'Titlu', description: 'Pe scurt', byline: 'Ana Pop', canonical: 'https://site.example/canonic', lang: 'ro' });
  });

  // Readability's pick rests on class and id (the sidebar and the comments are unlikely
  // candidates, "article-body" scores up), its visibility check and turndown on hidden, style,
  // href, src and alt: written either way, the page must come out the same.
  it('extracts a page with upper-case attribute names exactly as the same page in lower case', () => {
    const para = (text: string, n: number) => Array.from({ length: n }, (_, i) => `<p>${text} (${i + 1}), with more words, so that it counts.</p>`).join('');
    const page =
      `<!doctype html><html lang="en"><head><title>Tide tables</title><meta name="description" content="When the water comes"><link rel="canonical" href="/tides"></head>` +
      `<body><div id="page"><div class="sidebar" id="related">${para('Other stories from the harbour desk and the weather office', 3)}</div>` +
      `<div class="article-body" id="story"><h1>Tide tables</h1>${para('The harbour master explained how the tide tables are computed for the coming season', 4)}` +
      `<p>See <a href="../charts">the charts</a> and <img src="img/tide.png" alt="A tide chart"> <img src="img/pixel.gif"></p>` +
      `<p hidden>Hidden by attribute.</p><p style="display:none">Hidden by style.</p><p aria-hidden="true">Hidden from readers.</p></div>` +
      `<div class="comments" id="comments">${para('A reader wrote that the tides, the moon, the wind, and the pressure, all matter here', 8)}</div></div></body></html>`;
    const shouted = shout(page);
    expect(shouted).toContain('<DIV CLASS="article-body" Id="story">');
    const lower = extractor.extract(page, 'https://site.example/news/tides');
    expect(lower.readable).toBe(true);
    expect(lower.markdown).toContain('[the charts](https://site.example/charts)');
    expect(lower.markdown).toContain('![A tide chart](https://site.example/news/img/tide.png)');
    for (const gone of ['Other stories', 'A reader wrote', 'Hidden by', 'Hidden from', 'pixel.gif']) expect(lower.markdown).not.toContain(gone);
    expect(extractor.extract(shouted, 'https://site.example/news/tides')).toEqual(lower);
  });

  it('takes the whole-page fallback the same way with upper-case attribute names', () => {
    const short = '<html><body><nav>Menu</nav><div class="hours"><b>Open</b> 9–17, <a href="/map">map</a> <img src="door.png"></div></body></html>';
    const fallback = extractor.extract(short, 'https://x.example/shop/');
    expect(fallback).toMatchObject({ readable: false, markdown: '**Open** 9–17, [map](https://x.example/map)' });
    expect(extractor.extract(shout(short), 'https://x.example/shop/')).toEqual(fallback);
  });

  it('keeps the first of two attributes spelled differently, as a browser does', () => {
    const { markdown } = extractor.extract(body('<p>Nach <a HREF="/erste" href="/zweite">dort</a>.</p>'), 'https://site.example/a');
    expect(markdown).toContain('[dort](https://site.example/erste)');
  });
});
