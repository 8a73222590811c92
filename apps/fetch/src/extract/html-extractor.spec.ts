import { describe, expect, it } from 'vitest';
import { HtmlExtractor } from './html-extractor.js';

const extractor = new HtmlExtractor();
const body = (inner: string) =>
  `<!doctype html><html lang="de"><head><title>Titel</title><meta name="description" content="Kurz"><link rel="canonical" href="/kanon"></head>` +
  `<body><nav><a href="/">Start</a></nav><article><h1>Titel</h1>${'<p>Ein Absatz mit genug Text, damit Readability ihn als Inhalt erkennt und behält.</p>'.repeat(6)}${inner}</article></body></html>`;

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
});
