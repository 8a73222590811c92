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

  it("keeps an image's alt and title on one line, so a multi-paragraph alt does not break the markdown", () => {
    const { markdown } = extractor.extract(body('<img src="/a.png" alt="First line.\n\nSecond   paragraph." title="A\n\n&quot;quoted&quot; title">'), 'https://site.example/x');
    expect(markdown).toContain('![First line. Second paragraph.](https://site.example/a.png "A \\"quoted\\" title")');
  });

  it('reads title, description, canonical and lang from the page', () => {
    const page = extractor.extract(body(''), 'https://site.example/a');
    expect(page).toMatchObject({ title: 'Titel', description: 'Kurz', canonical: 'https://site.example/kanon', lang: 'de', readable: true });
    // The title is the result's field, not the body's first line.
    expect(page.markdown.startsWith('Ein Absatz mit genug Text')).toBe(true);
    expect(page.markdown).not.toContain('Titel');
  });

  describe("Readability's pick is kept however small beside the page", () => {
    const links = (n: number, label: string) => Array.from({ length: n }, (_, i) => `<li><a href="/${label}/${i}">${label} ${i}</a></li>`).join('');
    const teaser = (i: number) =>
      `<div class="teaser"><h3><a href="/news/${i}">Story ${i}: the regional transport authority reviews its timetable</a></h3>` +
      `<p>A short summary of story ${i}, with enough words to read like the standfirst of a longer report elsewhere on the site.</p></div>`;

    it('a 400-character brief inside a 15 kB portal page', () => {
      const brief =
        'The northern bridge reopened to traffic on Monday morning after three weeks of repairs to its expansion joints. ' +
        'Engineers found corrosion worse than expected, the city said, but the work finished two days early. ' +
        'Buses return to their usual route from Tuesday, and the temporary ferry stops running at the end of the week.';
      const html =
        `<!doctype html><html lang="en"><head><title>Bridge reopens</title></head><body>` +
        `<header><nav><ul>${links(40, 'Section')}</ul></nav></header>` +
        `<div class="layout"><div class="main-column"><div class="story"><h1>Bridge reopens</h1><p class="byline">By Staff</p><div class="story-body"><p>${brief}</p></div></div>` +
        `<div class="more-news"><h2>More news</h2>${Array.from({ length: 45 }, (_, i) => teaser(i)).join('')}</div></div>` +
        `<aside><h2>Most read</h2><ol>${links(15, 'Popular')}</ol></aside></div>` +
        `<footer><ul>${links(30, 'Footer')}</ul><p>Copyright The Daily Example. All rights reserved.</p></footer></body></html>`;
      expect(html.length).toBeGreaterThan(15_000);
      expect(brief.length).toBeGreaterThan(300);
      const page = extractor.extract(html, 'https://news.example/bridge');
      expect(page.readable).toBe(true);
      expect(page.markdown).toBe(brief);
    });

    it('a short post above a long comment thread', () => {
      const post = [
        'We moved the allotment compost bins this weekend, and it went better than planned: two of us, one wheelbarrow and a borrowed fork.',
        'The new spot gets morning sun and sits closer to the water butt, which matters in August when the heap dries out within days.',
        'Next month we will build a second bay from the old pallets behind the shed, so that one heap can rest while the other fills.',
      ];
      const comment = (i: number) =>
        `<div class="comment" id="comment-${i}"><div class="comment-author">Reader ${i}</div>` +
        `<p>Comment ${i}: we did the same on our plot last year and the heap warmed up much faster once it was out of the shade, so I think you will be pleased with it.</p>` +
        `<a class="reply" href="#reply-${i}">Reply</a></div>`;
      const html =
        `<!doctype html><html lang="en"><head><title>Moving the compost bins</title></head><body>` +
        `<header><nav><ul>${links(8, 'Blog')}</ul></nav></header>` +
        `<div id="content"><div class="post"><h1>Moving the compost bins</h1><div class="entry">${post.map((p) => `<p>${p}</p>`).join('')}</div></div>` +
        `<section id="comments"><h2>40 comments</h2>${Array.from({ length: 40 }, (_, i) => comment(i)).join('')}</section></div>` +
        `<footer><p>Powered by a blog engine.</p></footer></body></html>`;
      const page = extractor.extract(html, 'https://blog.example/compost');
      expect(page.readable).toBe(true);
      expect(page.markdown).toBe(post.join('\n\n'));
    });
  });

  // Readability's walk starts at <html> and spares only <body>: an <html> whose class matches its
  // unlikely-candidate pattern was removed with the whole page in it, and the navigation stayed.
  it('cleans the page when <html> carries an unlikely class or <body> is marked hidden', () => {
    const nav = `<header class="site-header"><nav><ul>${Array.from({ length: 20 }, (_, i) => `<li><a href="/s${i}">Section ${i}</a></li>`).join('')}</ul></nav></header>`;
    const text = ['The harbour reopened to small boats after the storm.', 'Larger ships wait for the survey of the channel, due on Friday.'];
    const article = `<article><h1>Harbour reopens</h1>${text.map((t) => `<p>${t} ${t} ${t}</p>`).join('')}</article>`;
    const footer = `<footer><ul>${Array.from({ length: 10 }, (_, i) => `<li><a href="/f${i}">Footer ${i}</a></li>`).join('')}</ul></footer>`;
    const expected = text.map((t) => `${t} ${t} ${t}`).join('\n\n');
    for (const [htmlAttrs, bodyAttrs] of [
      [' class="header-spacing"', ''],
      [' class="header-spacing spacing" id="sidebar-layout"', ''],
      ['', ' aria-hidden="true"'],
    ]) {
      const page = extractor.extract(
        `<!doctype html><html${htmlAttrs} lang="en"><head><title>Harbour reopens</title></head><body${bodyAttrs}>${nav}<div class="wrap">${article}</div>${footer}</body></html>`,
        'https://port.example/news/harbour',
      );
      expect(page, `${htmlAttrs}${bodyAttrs}`).toMatchObject({ lang: 'en', readable: true, markdown: expected });
    }
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
        `${[1, 2, 3].map((n) => `<p>${text} Teil ${n}.</p>`).join('')}Erste Zeile nach dem Absatz.<br><br>Zweite Zeile, eigener Absatz.` +
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
    const noBody = extractor.extract(
      '<!doctype html><html lang="de"><title>Ohne Body</title><meta name="description" content="Kurz"><p>Ein <b>Absatz</b> ohne body.</p></html>',
      'https://x.example/',
    );
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

describe('heading permalinks and edit links (report finding 8)', () => {
  it('short MediaWiki headings survive without [edit]; a heading that is itself a link keeps its text', () => {
    const section = (h: string) =>
      `<div class="mw-heading mw-heading2"><h2 id="${h}">${h}</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="?action=edit&amp;section=1">edit</a><span class="mw-editsection-bracket">]</span></span></div>` +
      `<p>The ${h} section has a paragraph long enough to be kept by the extractor as part of the article body text.</p>`;
    const { markdown } = extractor.extract(
      `<!doctype html><html><head><title>W</title></head><body><div id="content"><div class="mw-parser-output">${['Zeros', 'Uses', 'Notes'].map(section).join('')}` +
        `<h2><a href="#more">More reading</a><a class="headerlink" href="#more">¶</a></h2><p>Another paragraph that is long enough to be kept in the body of the article.</p></div></div></body></html>`,
      'https://wiki.example/w',
    );
    for (const h of ['Zeros', 'Uses', 'Notes']) expect(markdown).toMatch(new RegExp(`^## ${h}$`, 'm'));
    expect(markdown).toContain('## [More reading](#more)');
    expect(markdown).not.toMatch(/edit|¶/);
  });
});

describe('whole-page fallback (report finding 17)', () => {
  it('drops consent banners and dialogs, not a wrapper named after them that holds the page', () => {
    const page = extractor.extract(
      '<!doctype html><html><head><title>Opening hours</title></head><body><div class="cookie-consent-shown">' +
        '<div id="cookie-banner">We use cookies to personalise content and ads. Accept or reject them in the settings.</div>' +
        '<div role="dialog" aria-label="Sign up">Get our weekly letter in your inbox.</div>' +
        '<h1>Opening hours</h1><p>Monday to Friday, 9 to 5.</p></div></body></html>',
      'https://shop.example/hours',
    );
    expect(page.readable).toBe(false);
    expect(page.markdown).toContain('Monday to Friday, 9 to 5.');
    expect(page.markdown).not.toMatch(/cookies|weekly letter/);
  });
});

describe('title (report finding 18)', () => {
  const titled = (title: string, og: string) =>
    `<!doctype html><html><head><title>${title}</title><meta property="og:title" content="${og}"></head><body><article>${'<p>A paragraph long enough for the article to be read as one by the extractor here.</p>'.repeat(4)}</article></body></html>`;
  it.each([
    ['Harbour city votes | The Daily Courier', 'Harbour city votes', 'Harbour city votes'],
    ['Why does my task never run? - Stack Overflow', 'Why does my task never run?', 'Why does my task never run?'],
    ['Harbour city votes', 'Harbour city votes', 'Harbour city votes'],
    ['Harbour city votes on Monday', 'Harbour city votes', 'Harbour city votes on Monday'],
    ['The Daily Courier | Harbour city votes', 'Harbour city votes', 'The Daily Courier | Harbour city votes'],
  ])('<title>%j, og:title %j → %j', (title, og, expected) => {
    expect(extractor.extract(titled(title, og), 'https://news.example/a').title).toBe(expected);
  });
});

describe('a Q&A page in a lone <main>: the answers that follow the question', () => {
  // The question is short, the answers long: Readability picks an answer, and the question's
  // post is read alone with the answers after it (titled-post.ts). Those answers are cleaned as
  // Readability cleans its pick: an aside, a widget box, a form inside an answer are not the answer.
  const answers = [
    'Pass chunksize to read_csv; it then returns an iterator of frames instead of one frame, and partial sums can be added up as you go, which keeps memory flat whatever the size of the file.',
    'If you only need a few columns, pass usecols as well; on wide files this often cuts memory use by more than half and speeds up parsing, and setting dtype for known columns helps too.',
    'For data of this size a tool that works out of core may be better: DuckDB runs the group-by on the CSV file directly, without loading it, and is usually much faster than a loop over chunks.',
  ];
  const html =
    '<!doctype html><html lang="en"><head><title>Reading a large CSV in chunks - Data Questions</title></head><body><div class="topbar"><a href="/">Data Questions</a></div><main>' +
    '<div class="question"><h1>Reading a large CSV in chunks</h1><p>My CSV file is 12 GB and my machine has 8 GB of memory; read_csv gets killed. How do I read it a piece at a time and still compute a group-by over the whole file, without buying more memory?</p></div>' +
    '<h2>3 Answers</h2>' +
    answers
      .map(
        (a, i) =>
          `<div class="answer" id="a-${i}"><div class="answer-body"><p>${a}</p><p>Answer ${i + 1} adds: the documentation explains this at length, with examples for every reader function.</p><p>${a.replace(/^\S+ \S+/, 'In short,')} It is the approach most people settle on after trying the others, in my experience.</p></div>` +
          `<aside><p>Hiring now: join the data platform team at a fast-growing startup, remote friendly.</p></aside>` +
          `<div class="widget"><p>Was this answer helpful to you?</p></div></div>`,
      )
      .join('') +
    '</main><div class="bottom"><a href="/about">About</a></div></body></html>';

  it('keeps every answer, before and after the one Readability picked, cleaned as Readability cleans its pick', () => {
    const { markdown } = extractor.extract(html, 'https://qa.example/q/1');
    expect(markdown).toContain('My CSV file is 12 GB');
    for (const a of answers) expect(markdown).toContain(a);
    expect(markdown).not.toContain('Hiring now');
    expect(markdown).not.toContain('Was this answer helpful');
  });

  it('keeps the answers before the one Readability picked (the last and longest)', () => {
    const body = (a: string, i: number) =>
      i === 2 ? `<p>${a}</p><p>${a} Again, in other words.</p>` : `<p>${a}</p><p>Answer ${i + 1} adds: the documentation explains this at length.</p>`;
    const page =
      '<!doctype html><html lang="en"><head><title>Reading a large CSV in chunks - Data Questions</title></head><body><div class="topbar"><a href="/">Data Questions</a></div><main>' +
      '<div class="question"><h1>Reading a large CSV in chunks</h1><p>My CSV file is 12 GB and my machine has 8 GB of memory; read_csv gets killed. How do I read it a piece at a time and still compute a group-by over the whole file, without buying more memory?</p></div><h2>3 Answers</h2>' +
      answers.map((a, i) => `<div class="answer" id="a-${i}"><div class="answer-body">${body(a, i)}</div></div>`).join('') +
      '</main><div class="bottom"><a href="/about">About</a></div></body></html>';
    const { markdown } = extractor.extract(page, 'https://qa.example/q/1');
    for (const text of ['My CSV file is 12 GB', 'Answer 1 adds', 'Answer 2 adds', 'Again, in other words.']) expect(markdown).toContain(text);
  });
});

describe('reviews under a product', () => {
  it("each review's title (a heading, or a box named title) stays on the line after its author's", () => {
    const review = (title: string, author: string, date: string, text: string, heading: boolean) =>
      `<div class="review-item"><div class="review-head"><span class="review-author">${author}</span> <time datetime="${date}">${date}</time></div>` +
      (heading ? `<h3>${title}</h3>` : `<span data-hook="review-title" class="a-text-bold review-title">${title}</span>`) +
      `<div class="review-text"><p>${text}</p></div></div>`;
    const html =
      '<!doctype html><html lang="en"><head><title>Enamel camping mug</title></head><body><main><h1>Enamel camping mug</h1><p>A steel mug with an enamel coat, 350 ml.</p>' +
      '<section id="reviews"><h2>Reviews</h2>' +
      review(
        'Survived the Cairngorms',
        'Hannah P.',
        '2024-02-11',
        'Dropped on rocks twice and the enamel only chipped a tiny bit on the rim; coffee stays hot long enough to drink outside.',
        true,
      ) +
      review(
        'Wish it had a lid',
        'Marcus D.',
        '2024-01-30',
        'Good size for porridge as well as tea, and it has survived the dishwasher every day for a month with no rust at all.',
        false,
      ) +
      review(
        'Handles get hot',
        'Aoife K.',
        '2023-12-19',
        'Bought four for the family camping box; the handles get hot on the stove, which is worth knowing if you have children.',
        true,
      ) +
      '</section></main></body></html>';
    const { markdown } = extractor.extract(html, 'https://shop.example/mug');
    expect(markdown).toContain('**Hannah P.** · 2024-02-11\n\n**Survived the Cairngorms**\n\nDropped on rocks twice');
    expect(markdown).toContain('**Marcus D.** · 2024-01-30\n\n**Wish it had a lid**\n\nGood size for porridge');
    expect(markdown).toContain('**Aoife K.** · 2023-12-19\n\n**Handles get hot**\n\nBought four');
  });

  it('reviews titled the same on purpose ("Five stars") each keep their title; a reply titled "Re: <topic>" does not', () => {
    const review = (title: string, author: string, date: string, text: string) =>
      `<div class="review-item"><div class="review-head"><span class="review-author">${author}</span> <time datetime="${date}">${date}</time></div>` +
      `<h3>${title}</h3><div class="review-text"><p>${text}</p></div></div>`;
    const html =
      '<!doctype html><html lang="en"><head><title>Enamel camping mug</title></head><body><main><h1>Enamel camping mug</h1><p>A steel mug with an enamel coat, 350 ml.</p>' +
      '<section id="reviews"><h2>Reviews</h2>' +
      review('Five stars', 'Hannah P.', '2024-02-11', 'Dropped on rocks twice and the enamel only chipped a tiny bit on the rim; coffee stays hot long enough to drink outside.') +
      review('Five stars', 'Marcus D.', '2024-01-30', 'Good size for porridge as well as tea, and it has survived the dishwasher every day for a month with no rust at all.') +
      review(
        'Re: Enamel camping mug',
        'Aoife K.',
        '2023-12-19',
        'Bought four for the family camping box; the handles get hot on the stove, which is worth knowing if you have children.',
      ) +
      '</section></main></body></html>';
    const { markdown } = extractor.extract(html, 'https://shop.example/mug');
    expect(markdown).toContain('**Hannah P.** · 2024-02-11\n\n**Five stars**\n\nDropped on rocks twice');
    expect(markdown).toContain('**Marcus D.** · 2024-01-30\n\n**Five stars**\n\nGood size for porridge');
    expect(markdown).toContain('**Aoife K.** · 2023-12-19\n\nBought four');
  });
});

describe('code blocks in wrappers named like furniture', () => {
  // Readability weighs a class holding "scroll" (or "hidden", "share"...) as negative and its
  // conditional cleaning then removes the wrapper: docs sites put their code blocks in such
  // wrappers for the horizontal scrollbar.
  const docs = (block: string) =>
    '<!doctype html><html lang="en"><head><title>Streams</title></head><body><nav><a href="/">Home</a> <a href="/api">API</a></nav><main><h1>Streams</h1>' +
    '<p>A readable stream hands out its chunks one at a time; the loop below reads every chunk of a file, and stops at its end without loading the whole file into memory at once.</p>' +
    block +
    '<p>The loop ends when the stream does, and an error thrown inside it closes the stream, so the file handle is never left open behind a failed read or an early return.</p>' +
    '<p>Each chunk is a Buffer unless an encoding was given, in which case the chunks are strings cut at character boundaries rather than at byte counts.</p></main>' +
    '<footer><a href="/about">About</a></footer></body></html>';
  const code = 'for await (const chunk of fs.createReadStream(path)) {\n  count += chunk.length;\n}';

  it.each([
    ['div.scroll', `<div class="scroll"><pre><code>${code}</code></pre></div>`],
    ['div.highlight-scroll', `<div class="highlight highlight-scroll"><pre>${code}</pre></div>`],
    ['pre-scrollable wrapper', `<div class="pre-scrollable"><div class="code-wrap"><pre><code class="language-js">${code}</code></pre></div></div>`],
    ['overflow-scroll with an id', `<div class="overflow-scroll" id="code-scroll-1"><pre>${code}</pre></div>`],
    ['a hidden-scrollbar wrapper', `<div class="codeblock hidden-scrollbar"><pre><code>${code}</code></pre></div>`],
  ])('%s keeps its code', (_name, block) => {
    const { markdown } = extractor.extract(docs(block), 'https://docs.example/streams');
    expect(markdown).toContain('for await (const chunk of fs.createReadStream(path)) {\n  count += chunk.length;\n}');
    expect(markdown).toContain('The loop ends when the stream does');
  });

  it('a link list in a negatively named box around a small snippet still goes', () => {
    const links = Array.from({ length: 12 }, (_, i) => `<li><a href="/guides/${i}">Further guide number ${i}</a></li>`).join('');
    const { markdown } = extractor.extract(docs(`<div class="widget-scroll"><ul>${links}</ul><code>npm i</code></div>`), 'https://docs.example/streams');
    expect(markdown).not.toContain('Further guide number');
    expect(markdown).toContain('The loop ends when the stream does');
  });
});
