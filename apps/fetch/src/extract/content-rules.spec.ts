import { describe, expect, it } from 'vitest';
import { ALL_RULES, type ContentRules } from './content-rules.js';
import { HtmlExtractor } from './html-extractor.js';

// Each rule on a small page, with the rule on and off: the difference is the rule's doing.
const only = (off: keyof ContentRules) => new HtmlExtractor({ [off]: false });
const all = new HtmlExtractor(ALL_RULES);
const url = 'https://news.example/story';

const story = [
  'The harbour board voted on Thursday to lease the old grain silo to a group of artists, who plan to turn its ground floor into studios and a small gallery.',
  'The lease runs for ten years at a nominal rent, on condition that the group pays for repairs to the roof and the loading doors before the end of next year.',
  'Board members said the decision would bring people back to a part of the quay that has been empty since the grain trade moved to the new terminal.',
];
const paras = story.map((t) => `<p>${t}</p>`).join('');
const teasers = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<div class="card"><h3><a href="/s/${i}">Another story from the quay, number ${i}, with a long headline</a></h3><p>A summary of story ${i}: the council, the port and the weather again this week.</p></div>`,
  ).join('');
// A subscription prompt after the body, named nothing that marks it as furniture.
const wall = `<div class="x2"><h2>Continue reading</h2><p>Subscribe today for unlimited access to award-winning journalism, the daily puzzles, and our archive going back to 1890.</p></div>`;
const page = (body: string, head = '') => `<!doctype html><html lang="en"><head><title>Silo lease approved</title>${head}</head><body>${body}</body></html>`;

describe('content rules', () => {
  it('declaredBody: the itemprop=articleBody element is the content, whatever surrounds it', () => {
    // A teaser column with more text than the story, beside a story without <article>.
    const html = page(`<div class="col">${teasers(6)}</div><article><h1>Silo lease approved</h1><div itemprop="articleBody">${paras}</div>${wall}</article>`);
    expect(all.extract(html, url).markdown).toBe(story.join('\n\n'));
    expect(only('declaredBody').extract(html, url).markdown).toContain('Continue reading');
  });

  it('declaredBody: JSON-LD articleBody locates the visible paragraphs and never adds its own text', () => {
    const hidden = 'Only subscribers read this sentence, which the page does not show.';
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@graph': [{ '@type': 'WebPage' }, { '@type': 'NewsArticle', articleBody: `${story.join(' ')} ${hidden}` }] });
    const html = page(
      `<div class="col">${teasers(6)}</div><article><h1>Silo lease approved</h1><div class="x1">${paras}</div>${wall}</article>`,
      `<script type="application/ld+json">${ld}</script>`,
    );
    const got = all.extract(html, url).markdown;
    expect(got).toBe(story.join('\n\n'));
    expect(got).not.toContain('subscribers');
    expect(only('declaredBody').extract(html, url).markdown).toContain('Continue reading');
    // Broken JSON-LD is no declaration.
    expect(() => all.extract(html.replace(ld, '{"articleBody": '), url)).not.toThrow();
  });

  it('namedBoilerplate: furniture named by class goes even where Readability keeps it; a wrapper holding the story stays', () => {
    // "article-related" reads "article" to Readability, which then keeps it; a sign-up box has a
    // real paragraph in it.
    const html = page(
      `<div class="page share-enabled"><article><h1>Silo lease approved</h1>${paras}` +
        `<div class="newsletter-signup"><h3>Get the harbour briefing</h3><p>The day’s top stories from the quay in your inbox every morning at seven, with the tides and the weather.</p></div>` +
        `<div class="article-related"><h2>Related</h2><p>The silo was built in 1911 and has been empty since the grain trade left the old quay for good.</p></div></article></div>`,
    );
    expect(all.extract(html, url).markdown).toBe(story.join('\n\n'));
    const without = only('namedBoilerplate').extract(html, url).markdown;
    expect(without).toContain('harbour briefing');
    expect(without).toContain('built in 1911');
  });

  it('namedBoilerplate: docs sections and headings whose ids are slugs of their own titles stay', () => {
    const section = (id: string, title: string) =>
      `<section id="${id}"><h2 id="${id}-h">${title}</h2><p>The ${title.toLowerCase()} of the API work as described here, with limits, defaults, and examples for each.</p></section>`;
    const html = page(
      `<article><h1>Silo API</h1>${paras}${section('subscriptions', 'Subscriptions')}${section('sharing', 'Sharing')}<h2 id="cookies">Cookies</h2><p>Cookies are set only after consent, for at most thirty days, and never shared.</p></article>`,
    );
    const got = all.extract(html, url).markdown;
    for (const kept of ['## Subscriptions', '## Sharing', '## Cookies', 'Cookies are set only']) expect(got).toContain(kept);
  });

  it('namedBoilerplate: a generated two-letter class "ad" is not an advert', () => {
    const html = page(
      `<article><h1>Silo lease approved</h1>${story.map((t) => `<p class="pw-post-body-paragraph ab ad fr">${t}</p>`).join('')}<div class="ad-slot">Advertisement</div></article>`,
    );
    expect(all.extract(html, url).markdown).toBe(story.join('\n\n'));
  });

  it('namedBoilerplate: a block named as the body and holding most of the prose stays, whatever else its class says', () => {
    // The body's class also says what the site does with it (paginated, expandable); the
    // pagination bar and the read-more strip beside it, named the same words, still go.
    const pager = `<div class="pagination"><a href="/p/2">Next page</a> <p>Page 1 of 2 of the quay coverage, in order of publication.</p></div>`;
    const more = `<div class="read-more-strip"><p>More from the harbour desk: the ferry timetable, the tides and the new fish market.</p></div>`;
    for (const cls of ['article-body pagination-first', 'entry-content entry-content-read-more']) {
      const html = page(`<div class="wrap"><h1>Silo lease approved</h1><div class="${cls}">${paras}</div>${pager}${more}</div>`);
      expect(all.extract(html, url).markdown).toBe(story.join('\n\n'));
    }
    // Named as a body but holding little of the prose: a furniture word still removes it.
    const teaser = page(
      `<div class="wrap"><h1>Silo lease approved</h1>${paras}<div class="post-content related">${`<p>${story[0]}</p>`.replace('harbour board', 'ferry board')}</div></div>`,
    );
    expect(all.extract(teaser, url).markdown).not.toContain('ferry board');
  });

  it('linkDensity: link lists and read-more lines in the pick go, a sentence with a link stays', () => {
    const links = `<ul>${Array.from({ length: 5 }, (_, i) => `<li><a href="/x/${i}">More about the quay, part ${i}</a></li>`).join('')}</ul>`;
    const html = page(
      `<article><h1>Silo lease approved</h1><p>${story[0]}</p><p><strong>Read more:</strong> <a href="/y">Artists look for studios across the city as rents rise</a></p>` +
        `<p>${story[1]} See <a href="/lease">the lease</a>.</p>${links}<p>${story[2]}</p></article>`,
    );
    expect(all.extract(html, url).markdown).toBe(`${story[0]}\n\n${story[1]} See [the lease](https://news.example/lease).\n\n${story[2]}`);
    const without = only('linkDensity').extract(html, url).markdown;
    expect(without).toContain('Read more');
    expect(without).toContain('part 4');
  });

  it('duplicateBlocks: a caption a gallery prints again goes, once said it stays; far repeats and short labels stay', () => {
    const caption = 'The old grain silo on the north quay, seen from the ferry landing at dusk on Wednesday.';
    const gallery =
      `<figure><img src="/silo.jpg" alt="${caption}"><figcaption>${caption}</figcaption></figure>` + `<div class="x3"><p>Photo 1 of 4</p><p>${caption}</p></div><p>${caption}</p>`;
    const html = page(`<article><h1>Silo lease approved</h1>${gallery}${paras}</article>`);
    const got = all.extract(html, url).markdown;
    expect(got.split(caption).length - 1).toBe(1);
    expect(got).toContain(story[2]);
    const without = only('duplicateBlocks').extract(html, url).markdown;
    expect(without.split(caption).length - 1).toBeGreaterThan(1);
    // A line that a structured page repeats in sections far apart (a plan, a menu) stays in each.
    const step = '<p>Portion: one cup of rice, half a cup of beans, one spoon of oil.</p>';
    const notes = (n: number) => Array.from({ length: 12 }, (_, i) => `<p>Note ${i} for day ${n}: walk to the quay, check the tide table and the ferry times.</p>`).join('');
    const plan = (n: number) => `<h2>Day ${n}</h2>${step}${notes(n)}`;
    const structured = all.extract(page(`<article><h1>Silo lease approved</h1>${plan(1)}${plan(2)}</article>`), url).markdown;
    expect(structured.split('Portion: one cup').length - 1).toBe(2);
  });

  it('duplicateBlocks: a heading repeated over a body of its own stays; one repeated with nothing between goes', () => {
    // Posts titled the same on purpose (a column's weekly entries), each over its own text.
    const title = 'Notes from the quay: what changed this week';
    const entries = story.map((text) => `<div class="entry"><h2>${title}</h2><p>${text}</p></div>`).join('');
    const got = all.extract(page(`<article><h1>Silo lease approved</h1>${entries}</article>`), url).markdown;
    expect(got.split(`## ${title}`).length - 1).toBe(3);
    for (const text of story) expect(got).toContain(text);
    // A sticky header's copy of the heading just above it, with no text between.
    const sticky = `<div class="entry"><h2>${title}</h2><div class="x4"><h2>${title}</h2></div><p>${story[0]}</p></div>`;
    const stickyPage = page(`<article><h1>Silo lease approved</h1>${sticky}<p>${story[1]}</p><p>${story[2]}</p></article>`);
    expect(all.extract(stickyPage, url).markdown.split(`## ${title}`).length - 1).toBe(1);
    expect(only('duplicateBlocks').extract(stickyPage, url).markdown.split(`## ${title}`).length - 1).toBe(2);
  });

  it('datelines: a date-only line at the start or end of the pick goes; one in the middle and a sentence with a date stay', () => {
    const html = page(
      `<article><h1>Silo lease approved</h1><p>Updated 5:27 am CST, Wednesday, Nov. 20, 2019</p><p>${story[0]}</p><p>${story[1]}</p>` +
        `<p>10:45 am</p><p>The vote was taken on 12 March 2019, after a debate that ran past midnight.</p><p>${story[2]}</p><p>Publié le 20 novembre 2019 à 10h48</p></article>`,
    );
    const got = all.extract(html, url).markdown;
    expect(got).not.toContain('Updated 5:27');
    expect(got).not.toContain('Publié le');
    expect(got).toContain('10:45 am');
    expect(got).toContain('12 March 2019');
    const without = only('datelines').extract(html, url).markdown;
    expect(without).toContain('Updated 5:27');
    expect(without).toContain('Publié le');
  });

  it('counters: a slideshow position goes, a fraction and a score stay', () => {
    const slide = (n: number) =>
      `<div class="slide"><img src="/s/${n}.jpg" alt=""><p>The north quay at low tide, picture ${n} of the series taken by the harbour photographer.</p><span class="pos">${n} of 3</span></div>`;
    const html = page(
      `<article><h1>Silo lease approved</h1>${paras}${[1, 2, 3].map(slide).join('')}<div><b>Image</b> <span>2</span> / <span>3</span></div>` +
        `<p>Mix 1/2 cup of lime with sand for the mortar; the board voted 7 of 9 in favour.</p></article>`,
    );
    const got = all.extract(html, url).markdown;
    for (const gone of ['1 of 3', '3 of 3', 'Image 2 / 3']) expect(got).not.toContain(gone);
    expect(got).toContain('1/2 cup');
    expect(got).toContain('7 of 9 in favour');
    expect(only('counters').extract(html, url).markdown).toContain('1 of 3');
  });

  it('counters: a vote count above a post goes; a number in prose, a score and a count not named for votes stay', () => {
    const answer = (votes: string, cls: string, text: string) => `<div class="answer"><div class="${cls}">${votes}</div><p>${text}</p></div>`;
    const html = page(
      `<article><h1>Silo lease approved</h1>${paras}` +
        answer('17', 'votes', 'The lease runs for 25 years, and the artists pay the upkeep of the roof.') +
        answer('−3', 'js-vote-count', 'The silo floods at spring tides, which nobody on the board mentioned.') +
        answer('1.2k', 'post-likes', 'A good use for a building that has stood empty since the grain trade left.') +
        `<p>Final score: <span class="score">2</span> to <span class="count">1</span> for the harbour team.</p></article>`,
    );
    const got = all.extract(html, url).markdown;
    for (const gone of [/^17$/m, /^−3$/m, /^1\.2k$/m]) expect(got).not.toMatch(gone);
    expect(got).toContain('The lease runs for 25 years');
    expect(got).toMatch(/Final score: 2 to 1/);
    expect(only('counters').extract(html, url).markdown).toMatch(/^17$/m);
  });

  it("postMeta: a post's meta line (asked, viewed, answered, modified) goes, marked by <time>, an ISO date or a meta/stats name, in any language; prose with a date stays", () => {
    // A Portuguese Q&A page in a lone <main>, no author markers: its meta rows are marked by a
    // <time>, an ISO timestamp in a title, or a class naming them meta/stats, never by their words.
    const replies = [
      'Lease it, but only with a clause that lets the board take the silo back if the roof is not repaired within two years of signing.',
      'The artists group already runs two studios in the old tram depot, and both have paid their rent on time since they opened.',
      'A gallery on the quay would bring people there at weekends, when the offices around it are closed and the quay is empty.',
    ];
    const answer = (i: number, text: string) =>
      `<div class="answer"><div class="corpo"><p>${text}</p><p>${story[i]} ${text}</p></div>` +
      `<div class="answer-meta">respondida há ${i + 2} dias · <a href="/a/${i}">link</a></div></div>`;
    const html = page(
      `<div class="top"><a href="/">Perguntas</a></div><main><div class="question"><h1>Silo lease approved</h1>` +
        `<div class="row"><div class="item">Perguntada <time datetime="2022-03-01T10:00:00">há 2 anos</time></div><div class="item" title="2024-03-01 09:12:00Z">Modificada hoje</div><div class="item">Vista 48mil vezes</div></div>` +
        `<p>${story[0]}</p><p>The vote is on <time datetime="2024-03-14">14 March</time>, and the board expects a long debate.</p>` +
        `<div class="when">Public hearing <time datetime="2099-05-04T19:00">4 May, 19:00</time> · Harbour Hall</div></div>` +
        `<h2>3 respostas</h2>${replies.map((text, i) => answer(i, text)).join('')}</main><div class="bottom">© 2024</div>`,
    );
    const got = all.extract(html, url).markdown;
    for (const gone of ['há 2 anos', 'Modificada hoje', '48mil', 'respondida']) expect(got).not.toContain(gone);
    expect(got).toContain('The vote is on 14 March, and the board expects a long debate.');
    // A line announcing what is still to come (an event, a deadline) is no post's meta.
    expect(got).toContain('Public hearing 4 May, 19:00 · Harbour Hall');
    for (const text of [...story, ...replies]) expect(got).toContain(text);
    const off = only('postMeta').extract(html, url).markdown;
    expect(off).toContain('há 2 anos');
    expect(off).toContain('respondida');
  });

  it('postMeta: a short dated line of content (a stats line) stays; a line in the post header, one named meta, a date with its label go', () => {
    // A sports report: each team's stats line is short, dated and named "stats", as a Q&A page's
    // meta rows are, but it is the report's content, away from the title and the post's header.
    const team = (name: string, stats: string, text: string) => `<h2>${name}</h2>${stats}<p>${text}</p>`;
    const html = page(
      `<div class="top"><a href="/">Sport</a></div><article><header><h1>Silo lease approved</h1>` +
        '<p>The board said yes, and the football club next door wants the car park for match days.</p>' +
        `<div>Ana Costa · 4 min read · <time datetime="2024-05-04T08:00">4 May 2024</time></div></header>` +
        `<p>${story[0]}</p>` +
        team(
          'Harbour FC',
          '<div class="stats">Goals: 12 · <time datetime="2024-05-03">3 May 2024</time></div>',
          'The harbour side scored twelve goals in their last six matches, more than any other team in the league over the same run of games.',
        ) +
        team(
          'Quay Rovers',
          '<div class="team-stats">Goals: 9 · 3 May 2024</div>',
          'The Rovers kept five clean sheets in a row before the derby, and their goalkeeper has not conceded from a set piece all season long.',
        ) +
        `<p>${story[1]}</p><div>Edited by Ana Costa <time datetime="2024-05-04T09:30">09:30</time></div><p>${story[2]}</p>` +
        `<p class="item-meta">Filed under Harbour · 3 comments · <time datetime="2024-05-04">4 May</time></p></article>`,
    );
    const got = all.extract(html, url).markdown;
    expect(got).toContain('Goals: 12 · 3 May 2024');
    expect(got).toContain('Goals: 9 · 3 May 2024');
    for (const gone of ['4 min read', 'Edited by', 'Filed under']) expect(got).not.toContain(gone);
    for (const text of story) expect(got).toContain(text);
    const off = only('postMeta').extract(html, url).markdown;
    for (const kept of ['4 min read', 'Edited by Ana Costa 09:30', 'Filed under']) expect(off).toContain(kept);
  });

  it("titleHeading: the pick's first heading goes when it is the title, not when text comes first", () => {
    const html = (heading: string) =>
      `<!doctype html><html lang="ja"><head><title>市立図書館、開館時間を延長 | 新聞</title></head><body><div class="x"><h1>${heading}</h1>` +
      `${'<p>市は来月から市立図書館の開館時間を午後九時まで延長すると発表した。仕事帰りの利用者からの要望に応えるもので、平日のみが対象となる。</p>'.repeat(4)}</div></body></html>`;
    expect(all.extract(html('市立図書館、開館時間を延長'), url).markdown.startsWith('市は来月から')).toBe(true);
    expect(only('titleHeading').extract(html('市立図書館、開館時間を延長'), url).markdown).toContain('市立図書館、開館時間を延長\n');
    // Another heading is content.
    expect(all.extract(html('別の見出し'), url).markdown).toContain('別の見出し');
  });
});
