// Writes the extraction corpus: apps/fetch/test/fixtures/corpus/NAME.html + NAME.expected.txt.
// Each page is a real-world page SHAPE (a news brief in a heavy portal, a long read, a paywall
// teaser, a forum thread, a blog post under its comments, docs, a product, a listicle, pages in
// twelve languages...) with its furniture in realistic amounts. The expected text is the body a
// reader came for: no title (it is the result's metadata), no byline, date, navigation, share
// bars, related links, comments (except where the thread is the page), ads or footer.
// Rerun: node bench/fetch/corpus/make-corpus.mjs (deterministic).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ARTICLES, FOREIGN, HEADLINES, STANDFIRSTS } from './texts.mjs';
import { DOCS, FORUM, GOV, JOB, LISTICLE, PODCAST, POSTS, PRESS, PRODUCTS, QA, QA_PT, RECIPE, REVIEWS, WIKI } from './texts-more.mjs';
import { blocks, comments, cookieBanner, esc, expectedText, footer, inBody, linkList, navList, page, rng, shareBar, teaserGrid } from './chrome.mjs';

const OUT = fileURLToPath(new URL('../../../apps/fetch/test/fixtures/corpus/', import.meta.url));
const pages = [];
const add = (name, html, expected) => pages.push({ name, html, expected });

// ---------------------------------------------------------------- site templates

/** A heavy news portal: mega menu, ticker, rails, "more news" grid, big footer. */
function portal(r, lang, art, o = {}) {
  const content = o.content ?? blocks(art.blocks, o.style);
  const wrap = o.wrap ?? ((inner) => `<div class="article-body">${inner}</div>`);
  const mega = `<nav class="main-nav" aria-label="Main"><ul class="menu">${navList(lang, r)}</ul><div class="mega-menu">${[0, 1, 2].map((i) => `<div class="mega-col"><ul>${navList(lang, r, 1)}</ul></div>`).join('')}</div></nav>`;
  const top = `<div class="top-bar"><a href="/subscribe">Subscribe</a><a href="/login">Sign in</a><span class="date">Tuesday 12 March 2024</span></div>`;
  const header = `<header class="site-header">${top}<a class="logo" href="/">The ${lang === 'en' ? 'Daily Courier' : 'Courier'}</a>${mega}<form class="search"><input name="q"><button>Search</button></form></header>`;
  const ticker = o.ticker === false ? '' : `<div class="breaking-ticker"><span>Breaking</span><ul>${linkList(r, lang, 4)}</ul></div>`;
  const crumbs = `<ol class="breadcrumb"><li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/news/local">Local</a></li></ol>`;
  const byline =
    o.byline === false
      ? ''
      : `<div class="byline">By <a href="/author/j-smith" rel="author">Jane Smith</a>, Local Affairs Reporter</div><time datetime="2024-03-12T08:30">12 March 2024, 08:30</time>`;
  const headBlock = `<header class="article-header">${crumbs}<h1 class="headline">${esc(art.title)}</h1>${o.standfirst ? `<p class="standfirst">${esc(o.standfirst)}</p>` : ''}${byline}${shareBar(o.share ?? 0)}</header>`;
  const heroImg = o.hero ? `<figure class="hero"><img src="/img/hero.jpg" alt="${esc(o.hero)}"><figcaption>${esc(o.hero)}</figcaption></figure>` : '';
  const after = `${o.afterBody ?? ''}<div class="tags"><span>Topics:</span><a href="/t/1">Local news</a><a href="/t/2">Transport</a><a href="/t/3">Council</a></div>${shareBar(1)}<section class="more-on-story"><h2>More on this story</h2><ul>${linkList(r, lang, 5)}</ul></section>`;
  const articleTag = o.articleTag ?? 'article';
  const main = `<main id="main"><${articleTag} class="story">${headBlock}${heroImg}${wrap(content)}${after}</${articleTag}>${o.comments ?? ''}<section class="more-news"><h2>More news</h2><div class="grid">${teaserGrid(r, lang, o.teasers ?? 24, { tag: o.teaserTag ?? 'div' })}</div></section></main>`;
  const rail = `<aside class="sidebar"><section class="most-read"><h2>Most read</h2><ol>${linkList(r, lang, 10)}</ol></section><div class="ad-slot ad-mpu"><span>Advertisement</span></div><section class="editors-picks"><h2>Editor’s picks</h2>${teaserGrid(r, lang, 6, { cls: 'pick' })}</section></aside>`;
  const body = `${o.cookie === false ? '' : cookieBanner(o.cookieKind ?? 0)}${header}${ticker}<div class="layout">${main}${rail}</div>${inBody.newsletter().html}${footer(r, lang, { columns: 5, links: 10 })}`;
  return page({
    lang,
    title: `${art.title} | ${lang === 'en' ? 'The Daily Courier' : 'Courier'}`,
    head: o.head ?? '',
    htmlAttrs: o.htmlAttrs ?? '',
    bodyAttrs: o.bodyAttrs ?? ' class="article-page"',
    body,
  });
}

/** An old table-layout news site: ids, no semantic tags, <font>, text broken by <br>. */
function legacy(r, lang, art, o = {}) {
  const paras = art.blocks.filter((b) => typeof b === 'string');
  const text = o.br ? paras.map(esc).join('<br><br>\n') : paras.map((t) => `<p>${esc(t)}</p>`).join('');
  const left = `<td id="leftnav" width="160" valign="top"><table>${navList(lang, r, 2)
    .replace(/<li>/g, '<tr><td class="navitem">')
    .replace(
      /<\/li>/g,
      '</td></tr>',
    )}</table><br><b>Archive</b><br>${['January', 'February', 'March', 'April', 'May', 'June'].map((m) => `<a href="/arch/${m}">${m} 2024</a><br>`).join('')}</td>`;
  const right = `<td id="rightcol" width="200" valign="top"><div class="box"><b>Headlines</b><ul>${linkList(r, lang, 12)}</ul></div><div class="box"><b>Poll</b><br>Should the bypass be built?<br><input type="radio"> Yes <input type="radio"> No <button>Vote</button></div></td>`;
  const mid = `<td id="maincol" valign="top"><font size="1" class="crumbs"><a href="/">Home</a> &gt; <a href="/news">News</a></font><h1 class="title">${esc(art.title)}</h1><font size="1" class="date">Posted 12/03/2024 by admin</font><div id="storytext">${text}</div><div class="printlinks"><a href="/print">Print this story</a> | <a href="/email">Email to a friend</a></div><div class="box"><b>Other stories</b><ul>${linkList(r, lang, 8)}</ul></div></td>`;
  const body = `<table id="header" width="100%"><tr><td><a href="/"><img src="/logo.gif" alt="Valley Gazette"></a></td><td>${navList(lang, r).replace(/<\/?li>/g, ' ')}</td></tr></table><table id="layout" width="100%"><tr>${left}${mid}${right}</tr></table><div id="footer"><center>Copyright 2004-2024 Valley Gazette Ltd. <a href="/about">About</a> | <a href="/advertise">Advertise</a> | <a href="/contact">Contact</a></center></div>`;
  return { html: page({ lang, title: art.title, body }), expected: paras.join('\n') };
}

/** A WordPress-style blog: widgets in a sidebar, comments under the post. */
function wpBlog(r, post, o = {}) {
  const widgets = `<aside id="secondary" class="widget-area"><section class="widget widget_search"><form><input name="s"><button>Search</button></form></section><section class="widget widget_recent_entries"><h2 class="widget-title">Recent Posts</h2><ul>${linkList(r, 'en', 6)}</ul></section><section class="widget widget_archive"><h2 class="widget-title">Archives</h2><ul>${['March 2024', 'February 2024', 'January 2024', 'December 2023', 'November 2023', 'October 2023', 'September 2023'].map((m) => `<li><a href="/${m}">${m}</a></li>`).join('')}</ul></section><section class="widget widget_tag_cloud"><h2 class="widget-title">Tags</h2><div class="tagcloud">${['garden', 'allotment', 'compost', 'recipes', 'walking', 'bread', 'family', 'diy', 'books'].map((t) => `<a href="/tag/${t}">${t}</a>`).join(' ')}</div></section><section class="widget widget_text"><h2 class="widget-title">About me</h2><div class="textwidget"><p>I write about growing things, making things and the odd long walk. Tea is always on.</p></div></section></aside>`;
  const postHtml = `<article id="post-${r.int(100, 999)}" class="post type-post status-publish format-standard hentry"><header class="entry-header"><h1 class="entry-title">${esc(post.title)}</h1><div class="entry-meta"><span class="posted-on">Posted on <time>March 12, 2024</time></span><span class="byline"> by <span class="author vcard"><a href="/author/me">Ruth</a></span></span></div></header><div class="entry-content">${blocks(post.blocks)}${o.shareInPost ? `<div class="sharedaddy sd-sharing-enabled"><h3 class="sd-title">Share this:</h3><ul><li><a href="#">Twitter</a></li><li><a href="#">Facebook</a></li><li><a href="#">Pinterest</a></li></ul></div><div class="jp-relatedposts"><h3>Related</h3>${teaserGrid(r, 'en', 3, { cls: 'jp-relatedposts-post' })}</div>` : ''}</div><footer class="entry-footer"><span class="cat-links">Posted in <a href="/c/garden">Garden</a></span><span class="tags-links">Tagged <a href="/t/a">allotment</a>, <a href="/t/b">compost</a></span></footer></article><nav class="post-navigation"><div class="nav-previous"><a href="/prev">Previous post: ${esc(HEADLINES[3])}</a></div><div class="nav-next"><a href="/next">Next post: ${esc(HEADLINES[10])}</a></div></nav>`;
  const body = `<div id="page" class="site"><a class="skip-link screen-reader-text" href="#content">Skip to content</a><header id="masthead" class="site-header"><div class="site-branding"><p class="site-title"><a href="/">Muddy Boots and Teacups</a></p><p class="site-description">Notes from a small allotment</p></div><nav id="site-navigation" class="main-navigation"><ul>${['Home', 'About', 'Garden', 'Kitchen', 'Walks', 'Contact'].map((l) => `<li><a href="/${l}">${l}</a></li>`).join('')}</ul></nav></header><div id="content" class="site-content"><div id="primary" class="content-area"><main id="main" class="site-main">${postHtml}${o.comments ?? ''}</main></div>${widgets}</div><footer id="colophon" class="site-footer"><div class="site-info">Proudly powered by WordPress | Theme: Twenty Something</div></footer></div>`;
  return page({
    title: `${post.title} – Muddy Boots and Teacups`,
    htmlAttrs: o.htmlAttrs ?? '',
    bodyAttrs: o.bodyAttrs ?? ' class="post-template-default single single-post postid-412 single-format-standard"',
    body,
  });
}

/** A docs site: side navigation tree, on-page table of contents, prev/next, edit link. */
function docsSite(r, doc, o = {}) {
  const tree = [
    'Getting started',
    'Installation',
    'Configuration',
    'Authentication',
    'Buckets',
    'Objects',
    'Uploads',
    'Downloads',
    'Lifecycle rules',
    'Replication',
    'Monitoring',
    'Troubleshooting',
    'API reference',
    'CLI reference',
    'Changelog',
    'FAQ',
  ];
  const side = `<nav class="sidebar-nav" aria-label="Docs"><div class="version-select"><select><option>v3.2 (latest)</option><option>v3.1</option><option>v2.x</option></select></div>${[
    0, 1, 2,
  ]
    .map(
      (g) =>
        `<div class="nav-group"><p class="nav-group-title">${['Guides', 'Reference', 'Resources'][g]}</p><ul>${tree
          .slice(g * 5, g * 5 + 7)
          .map(
            (t) =>
              `<li><a href="/docs/${t.toLowerCase().replace(/ /g, '-')}">${t}</a>${g === 1 ? `<ul>${['Overview', 'Examples', 'Limits'].map((s) => `<li><a href="#">${s}</a></li>`).join('')}</ul>` : ''}</li>`,
          )
          .join('')}</ul></div>`,
    )
    .join('')}</nav>`;
  const heads = (doc.blocks ?? []).filter((b) => b.h2).map((b) => b.h2);
  const toc = heads.length ? `<nav class="toc"><p>On this page</p><ul>${heads.map((h) => `<li><a href="#${h}">${esc(h)}</a></li>`).join('')}</ul></nav>` : '';
  const content = o.content ?? blocks(doc.blocks);
  const body = `<header class="docs-header"><a class="logo" href="/">Bucketeer</a><nav><a href="/docs">Docs</a><a href="/pricing">Pricing</a><a href="/blog">Blog</a><a href="https://github.com/example">GitHub</a></nav><div class="docsearch"><button>Search docs… ⌘K</button></div></header><div class="docs-layout">${side}<main class="docs-content"><div class="breadcrumbs"><a href="/docs">Docs</a> › <a href="/docs/guides">Guides</a></div><article class="${o.articleClass ?? 'markdown-body'}"><h1>${esc(doc.title)}</h1>${content}</article><div class="feedback">Was this page helpful? <button>Yes</button><button>No</button></div><div class="page-nav"><a class="prev" href="/docs/prev">← Installation</a><a class="next" href="/docs/next">Authentication →</a></div><a class="edit-link" href="https://github.com/example/docs/edit/main/page.md">Edit this page on GitHub</a><p class="last-updated">Last updated on 4 March 2024</p></main>${toc}</div><footer class="docs-footer"><p>© 2024 Bucketeer Inc. Docs licensed under CC BY 4.0.</p><ul><li><a href="/status">Status</a></li><li><a href="/security">Security</a></li><li><a href="/privacy">Privacy</a></li></ul></footer>`;
  return page({ title: `${doc.title} - Bucketeer Docs`, htmlAttrs: o.htmlAttrs ?? '', body });
}

/** A forum thread: every post is the content; signatures, user cards and pagination are not. */
function forumThread(r, o = {}) {
  const posts = FORUM.posts.map((p, i) => {
    const card = `<div class="postprofile"><a class="username" href="/u/${p.user}">${esc(p.user)}</a><span class="rank">${i % 2 ? 'Regular' : 'New member'}</span><span class="posts">Posts: ${r.int(3, 4000)}</span><span class="joined">Joined: ${2008 + (i % 14)}</span></div>`;
    const sig = i % 2 === 1 ? `<div class="signature">Gas Safe registered since 2006. Advice given in good faith, always get a professional to check.</div>` : '';
    if (o.style === 'discourse')
      return `<div class="topic-post" id="post_${i + 1}"><div class="topic-avatar"><img src="/a/${i}.png" alt=""></div><div class="topic-body"><div class="topic-meta-data"><span class="names"><a href="/u/${p.user}">${esc(p.user)}</a></span><span class="post-date">${i + 1}d</span></div><div class="regular contents"><div class="cooked"><p>${esc(p.text)}</p></div><section class="post-menu-area"><button>Like</button><button>Reply</button></section></div></div></div>`;
    return `<div class="post bg${(i % 2) + 1}" id="p${1000 + i}"><div class="inner">${card}<div class="postbody"><h3><a href="#p${1000 + i}">Re: ${esc(FORUM.title)}</a></h3><p class="author">by ${esc(p.user)} » Tue Mar 12, 2024 ${8 + i}:15 am</p><div class="content">${esc(p.text)}</div>${sig}</div></div></div>`;
  });
  const similar = `<div class="similar-topics"><h3>Similar topics</h3><ul>${['Radiator cold at the top', 'Combi boiler making banging noise', 'Thermostat keeps losing connection', 'Is a power flush worth it?', 'Underfloor heating on a timber floor'].map((t) => `<li><a href="/t/${t}">${t}</a></li>`).join('')}</ul></div>`;
  const pagination = `<div class="pagination">6 posts • Page <strong>1</strong> of <strong>1</strong></div>`;
  const body = `<div id="wrap"><div class="headerbar"><a href="/" class="logo">DIY Answers Forum</a><p>Home improvement, plumbing and heating help</p></div><div class="navbar"><ul class="linklist"><li><a href="/faq">FAQ</a></li><li><a href="/register">Register</a></li><li><a href="/login">Login</a></li></ul><ul class="breadcrumbs"><li><a href="/">Board index</a></li><li><a href="/f/heating">Heating and plumbing</a></li></ul></div><div id="page-body"><h2 class="topic-title">${esc(FORUM.title)}</h2>${pagination}${posts.join('')}${pagination}${similar}<div class="jumpbox"><select><option>Heating and plumbing</option><option>Electrics</option><option>Building</option></select></div></div><div class="copyright">Powered by phpBB® Forum Software</div></div>`;
  // Each post under its author and date, as the page marks them (a reader of a thread needs who said what).
  const expected = FORUM.posts.map((p, i) => `${p.user} · ${o.style === 'discourse' ? `${i + 1}d` : `Tue Mar 12, 2024 ${8 + i}:15 am`}\n${p.text}`).join('\n');
  return { html: page({ title: `${FORUM.title} - DIY Answers Forum`, bodyAttrs: ' class="section-viewtopic ltr"', body }), expected };
}

// ---------------------------------------------------------------- English news

const r0 = rng(1);
const briefText = expectedText(ARTICLES.bridge.blocks);
add('news-brief-portal', portal(r0, 'en', ARTICLES.bridge, { teasers: 30 }), briefText);
add('news-brief-portal-semantic-teasers', portal(rng(2), 'en', ARTICLES.transit, { teasers: 36, teaserTag: 'article' }), expectedText(ARTICLES.transit.blocks));
add('news-brief-html-class-header', portal(rng(3), 'en', ARTICLES.storm, { htmlAttrs: ' class="header-spacing spacing"', teasers: 24 }), expectedText(ARTICLES.storm.blocks));
add(
  'news-brief-html-class-sidebar',
  portal(rng(4), 'en', ARTICLES.museum, { htmlAttrs: ' class="no-js has-sidebar sidebar-left"', teasers: 20, wrap: (i) => `<div class="entry">${i}</div>` }),
  expectedText(ARTICLES.museum.blocks),
);
add(
  'news-html-id-footer',
  portal(rng(5), 'en', ARTICLES.chip, { htmlAttrs: ' id="page-footer-sticky" class="js"', standfirst: 'The company cites weaker demand and higher equipment costs.', teasers: 18 }),
  expectedText(ARTICLES.chip.blocks),
);
add(
  'news-long-portal',
  portal(rng(6), 'en', ARTICLES.heatwave, {
    hero: 'Patients wait outside the emergency department of the university hospital.',
    content: blocks([
      ...ARTICLES.heatwave.blocks.slice(0, 3),
      inBody.ad(rng(7)),
      ...ARTICLES.heatwave.blocks.slice(3, 6),
      inBody.readMore(rng(8)),
      ...ARTICLES.heatwave.blocks.slice(6),
    ]),
  }),
  ['Patients wait outside the emergency department of the university hospital.', expectedText(ARTICLES.heatwave.blocks)].join('\n'),
);
add('news-council-comments', portal(rng(9), 'en', ARTICLES.council, { comments: comments(rng(10), 40, 2), teasers: 12 }), expectedText(ARTICLES.council.blocks));
add(
  'news-election-no-article-tag',
  portal(rng(11), 'en', ARTICLES.election, { articleTag: 'div', wrap: (i) => `<div class="body-copy" id="story-body">${i}</div>`, teasers: 26, cookieKind: 1 }),
  expectedText(ARTICLES.election.blocks),
);
add(
  'news-sport-inline-related',
  portal(rng(12), 'en', ARTICLES.football, {
    content: blocks([ARTICLES.football.blocks[0], inBody.relatedBox(rng(13)), ...ARTICLES.football.blocks.slice(1, 3), inBody.video(), ARTICLES.football.blocks[3]]),
    teasers: 22,
  }),
  expectedText(ARTICLES.football.blocks),
);
{
  const sci = [
    ...ARTICLES.science.blocks.slice(0, 2),
    { caption: 'An artist’s impression of the planet passing in front of its red dwarf star.' },
    ...ARTICLES.science.blocks.slice(2),
  ];
  add('news-science-figures', portal(rng(14), 'en', ARTICLES.science, { content: blocks(sci), teasers: 10 }), expectedText(sci));
}
add('news-housing-table', portal(rng(15), 'en', ARTICLES.housing, { teasers: 16, cookieKind: 2 }), expectedText(ARTICLES.housing.blocks));
add('news-obituary-short', portal(rng(16), 'en', ARTICLES.obituary, { teasers: 28, byline: false }), expectedText(ARTICLES.obituary.blocks));
add('news-wire-legacy-table', legacy(rng(17), 'en', ARTICLES.wire).html, legacy(rng(17), 'en', ARTICLES.wire).expected);
add('news-legacy-br-paragraphs', legacy(rng(18), 'en', ARTICLES.chip, { br: true }).html, legacy(rng(18), 'en', ARTICLES.chip, { br: true }).expected);

// A paywalled article: the teaser is what the page shows; the rest is behind the wall.
{
  const art = ARTICLES.rail;
  const teaser = art.blocks.slice(0, 2);
  const wall = `<div class="paywall" id="paywall-prompt"><h2>Continue reading with a subscription</h2><p>Subscribe today for unlimited access to award-winning journalism, the daily puzzles and our archive going back to 1890.</p><ul><li>Cancel anytime</li><li>First month for 1</li><li>Ad-free reading</li></ul><a class="btn" href="/subscribe">Subscribe now</a><p>Already a subscriber? <a href="/login">Sign in</a></p></div>`;
  add('news-paywall-teaser', portal(rng(19), 'en', art, { content: blocks(teaser) + `<div class="fade-out"></div>`, afterBody: wall, teasers: 20 }), expectedText(teaser));
  // The same wall, but the page declares the full text in JSON-LD (common for search engines).
  const ld = {
    '@context': 'https://schema.org',
    '@type': 'NewsArticle',
    headline: art.title,
    isAccessibleForFree: false,
    articleBody: art.blocks.filter((b) => typeof b === 'string').join(' '),
    author: { '@type': 'Person', name: 'Jane Smith' },
    hasPart: { '@type': 'WebPageElement', isAccessibleForFree: false, cssSelector: '.paywalled' },
  };
  add(
    'news-paywall-jsonld-full',
    portal(rng(20), 'en', art, {
      content: blocks(teaser) + `<div class="paywalled" style="display:none"></div>`,
      afterBody: wall,
      teasers: 20,
      head: `<script type="application/ld+json">${JSON.stringify(ld)}</script>`,
    }),
    expectedText(teaser),
  );
}

// Long-form feature: pull quotes repeat the text and are furniture; the author bio is not the story.
{
  const art = ARTICLES.rail;
  const pull = (t) => ({ html: `<aside class="pullquote"><p>${esc(t)}</p></aside>` });
  const content = blocks([
    ...art.blocks.slice(0, 4),
    pull('“The drainage, the culverts, the thousand sleepers we replaced by hand.”'),
    ...art.blocks.slice(4, 9),
    inBody.newsletter(),
    ...art.blocks.slice(9),
  ]);
  const bio = `<div class="author-bio"><img src="/a.jpg" alt=""><p><strong>Tom Avery</strong> is a feature writer who covers transport and the countryside. His book on branch lines was published last year.</p><a href="/author/tom">More from Tom Avery</a></div>`;
  const r = rng(21);
  const body = `${cookieBanner(1)}<header class="mag-header"><a href="/" class="logo">The Long Read</a><nav><ul>${navList('en', r)}</ul></nav><button class="menu-toggle">Menu</button></header><main><article class="feature"><div class="feature-hero"><img src="/hero.jpg" alt="A train crosses the rebuilt embankment"><p class="kicker">Feature</p><h1>${esc(art.title)}</h1><p class="dek">After eleven years and six million pounds, volunteers have brought a closed line back to life.</p><p class="byline">Words by Tom Avery · Photographs by Sam Lee · 14 min read</p></div>${shareBar(2)}<div class="feature-body">${content}</div>${bio}</article><section class="read-next"><h2>Read next</h2>${teaserGrid(r, 'en', 6, { tag: 'article', cls: 'card' })}</section></main>${footer(r, 'en', { columns: 3, links: 6 })}`;
  add('feature-longform-pullquotes', page({ title: art.title, body }), expectedText(art.blocks));
}

// Live blog: every entry is content; the "key events" summary links are not.
{
  const r = rng(22);
  const entries = [
    'The transport authority has confirmed that no trains will run on the northern line until at least midday. Replacement buses are running from the station forecourt every fifteen minutes.',
    'Union representatives are due to meet the operator at 11am. Both sides say they want to avoid a second day of action later this month.',
    'Commuters at the central bus station describe queues stretching round the block. One told us she had been waiting for forty minutes and would be late for her shift at the hospital.',
    'The operator says about a third of its usual services are running, mostly on the routes into the city centre.',
    'Talks have ended without agreement. The union says it will announce further dates within the week; the operator calls the outcome disappointing.',
    'That is all from us for today. Thank you for following our coverage.',
  ];
  const li = entries
    .map(
      (t, i) =>
        `<div class="block" id="block-${i}"><div class="block-time"><time>${String(17 - i).padStart(2, '0')}:${String(45 - i * 7).padStart(2, '0')}</time></div><div class="block-elements"><p>${esc(t)}</p></div><div class="block-share"><a href="#block-${i}">Share</a></div></div>`,
    )
    .join('');
  const key = `<div class="key-events"><h2>Key events</h2><ul>${entries
    .slice(0, 4)
    .map((t, i) => `<li><a href="#block-${i}">${esc(t.split('. ')[0])}</a></li>`)
    .join('')}</ul></div>`;
  add(
    'news-liveblog',
    portal(r, 'en', { title: 'Transport strike: live updates', blocks: [] }, { content: `${key}<div class="live-blog">${li}</div>`, teasers: 14 }),
    entries.join('\n'),
  );
}

// Photo gallery: the captions are the content.
{
  const caps = [
    'Crowds gather on the quay before the first boat of the regatta sets off.',
    'A crew from the rowing club practises its turn at the harbour wall.',
    'Children watch the race from the roof of the old fish market.',
    'The winning crew lifts the cup, which dates from 1896.',
    'Fireworks over the bay close the three-day festival.',
  ];
  const r = rng(23);
  const gal = caps
    .map(
      (c, i) =>
        `<div class="gallery-slide"><img src="/g/${i}.jpg" alt=""><p class="gallery-caption">${esc(c)}</p><span class="credit">Photograph: Sam Lee</span><span class="counter">${i + 1} of ${caps.length}</span></div>`,
    )
    .join('');
  add(
    'news-photo-gallery',
    portal(r, 'en', { title: 'In pictures: the harbour regatta', blocks: [] }, { content: `<div class="gallery">${gal}</div>`, teasers: 20 }),
    caps.join('\n'),
  );
}

// A photo story whose slides repeat each caption (the image's alt and a zoom view's copy, neither
// named as furniture): only the repetition marks the copies.
{
  const intro =
    'The old tram depot on Mill Lane closed its doors on Sunday after 112 years. Our photographer spent the last week with the crews who kept the fleet running, from the night shift in the paint shop to the final run through the city centre.';
  const caps = [
    'A fitter checks the brakes on car 14 during the last night shift in the depot.',
    'The paint shop, where every tram in the city has been repainted since 1951.',
    'Drivers sign the depot log for the final time on Sunday morning.',
    'Car 9 leaves the depot for its last run through the city centre.',
    'Former staff and their families gather in the yard after the closing ceremony.',
  ];
  const r = rng(24);
  const slides = caps
    .map((c, i) => `<figure class="slide"><img src="/depot/${i}.jpg" alt="${esc(c)}"><figcaption>${esc(c)}</figcaption><div class="zoom-view"><p>${esc(c)}</p></div></figure>`)
    .join('');
  add(
    'news-gallery-repeated-captions',
    portal(
      r,
      'en',
      { title: 'In pictures: the last week of the Mill Lane tram depot', blocks: [] },
      { content: `<div class="photo-story"><p>${esc(intro)}</p>${slides}</div>`, teasers: 12 },
    ),
    [intro, ...caps].join('\n'),
  );
}

// A hand-written site of plain <div>s, no class, id or semantic tag: the breadcrumb, the bar of
// links repeated under the text and the legal line sit beside the paragraphs in one container.
{
  const paras = [
    'The parish council has agreed to buy the field behind the village hall for a new play area and a community orchard. The sale was approved at the meeting on Tuesday by seven votes to one.',
    'The field will be bought with the money set aside from the sale of the old pavilion, so the parish precept will not rise. Work on the play area is planned to start in the autumn, after the hay is cut.',
    'Residents can see the draft plans in the hall foyer until the end of the month and leave comments in the box by the door. A second meeting on the orchard, and which fruit trees to plant, will follow in June.',
  ];
  const bar = ['Home', 'Council', 'Meetings', 'Planning', 'Village hall', 'Contact'].map((l) => `<a href="/${l.toLowerCase().replace(' ', '-')}">${l}</a>`).join(' | ');
  const body = `<div><div>${bar}</div><div>You are here: <a href="/">Home</a> &gt; <a href="/news">News</a> &gt; Field purchase</div><h1>Council to buy the field behind the village hall</h1>${paras.map((p) => `<p>${esc(p)}</p>`).join('')}<div>${bar}</div><div>&copy; 2024 Ashby Parva Parish Council. All rights reserved. Clerk to the council: The Old School, Main Street, Ashby Parva.</div></div>`;
  add('parish-plain-divs', page({ title: 'Council to buy the field behind the village hall', body }), paras.join('\n'));
}

// ---------------------------------------------------------------- Other languages

const langs = Object.keys(FOREIGN);
langs.forEach((lang, i) => {
  const art = FOREIGN[lang];
  const r = rng(100 + i);
  const dir = lang === 'ar' ? ' dir="rtl"' : '';
  const variant = i % 3;
  const html =
    variant === 0
      ? portal(r, lang, art, { htmlAttrs: dir, teasers: 20 })
      : variant === 1
        ? portal(r, lang, art, { htmlAttrs: dir, articleTag: 'div', wrap: (x) => `<div itemprop="articleBody" class="text">${x}</div>`, teasers: 30, cookieKind: 2 })
        : legacy(r, lang, art).html.replace('<html lang', `<html${dir} lang`);
  add(`news-${lang}`, html, expectedText(art.blocks));
});

// A German brief in a portal with a body class that reads like furniture.
add(
  'news-de-body-class',
  portal(rng(130), 'de', FOREIGN.de, { bodyAttrs: ' class="page-sidebar-right comments-enabled header-fixed"', teasers: 34 }),
  expectedText(FOREIGN.de.blocks),
);
// French page whose article declares itemprop=articleBody and JSON-LD.
{
  const art = FOREIGN.fr;
  const ld = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: art.title, articleBody: expectedText(art.blocks).replace(/\n/g, ' '), inLanguage: 'fr' };
  add(
    'news-fr-jsonld',
    portal(rng(131), 'fr', art, {
      head: `<script type="application/ld+json">${JSON.stringify(ld)}</script>`,
      articleTag: 'div',
      wrap: (x) => `<div class="paywall-content" itemprop="articleBody">${x}</div>`,
      teasers: 26,
    }),
    expectedText(art.blocks),
  );
}

// ---------------------------------------------------------------- Blogs

{
  const post = POSTS.compost;
  add('blog-post-long-comments', wpBlog(rng(200), post, { comments: comments(rng(201), 45, 0) }), expectedText(post.blocks));
  add('blog-post-disqus', wpBlog(rng(202), POSTS.trip, { comments: comments(rng(203), 30, 1), shareInPost: true }), expectedText(POSTS.trip.blocks));
  add('blog-sourdough-long', wpBlog(rng(204), POSTS.sourdough, { comments: comments(rng(205), 12, 0), shareInPost: true }), expectedText(POSTS.sourdough.blocks));
  add(
    'blog-body-class-comments',
    wpBlog(rng(206), POSTS.trip, {
      comments: comments(rng(207), 8, 0),
      bodyAttrs: ' class="single comments-open sidebar-hidden has-header-image"',
      htmlAttrs: ' class="no-js footer-reveal"',
    }),
    expectedText(POSTS.trip.blocks),
  );
}
// A Medium-like post: obfuscated classes, clap and follow bars, a "more from" footer.
{
  const post = POSTS.release;
  const r = rng(208);
  const cls = () => Array.from({ length: 4 }, () => `${String.fromCharCode(97 + r.int(0, 25))}${String.fromCharCode(97 + r.int(0, 25))}`).join(' ');
  const content = blocks(post.blocks, { p: (t) => `<p class="pw-post-body-paragraph ${cls()}">${esc(t)}</p>`, hClass: `pw-post-title ${cls()}` });
  const body = `<div id="root"><div class="${cls()}"><nav class="${cls()}"><a href="/">Engineering at Notely</a><a href="/m/signin">Sign in</a><a href="/m/signup">Get started</a></nav></div><div class="${cls()}"><article><div class="${cls()}"><section><div><h1 class="pw-post-title ${cls()}">${esc(post.title)}</h1><div class="pw-author ${cls()}"><a href="/@anna">Anna Berg</a><button>Follow</button><span>8 min read</span><span>Mar 12, 2024</span></div><div class="${cls()}"><button aria-label="clap">1.2K</button><button>24</button><button>Listen</button><button>Share</button></div>${content}</div></section></div></article><div class="${cls()}"><button aria-label="clap">1.2K</button><span>24 responses</span></div><div class="${cls()}"><h2>More from Engineering at Notely</h2>${teaserGrid(r, 'en', 4, { cls: 'postPreview' })}</div><div class="${cls()}"><h2>Recommended from Medium</h2>${teaserGrid(r, 'en', 6, { cls: 'rec' })}</div></div><footer class="${cls()}"><a href="/help">Help</a><a href="/status">Status</a><a href="/about">About</a><a href="/careers">Careers</a><a href="/blog">Blog</a><a href="/privacy">Privacy</a><a href="/terms">Terms</a></footer></div>`;
  add('blog-medium-like', page({ title: `${post.title} | by Anna Berg | Engineering at Notely`, body }), expectedText(post.blocks));
}
// A newsletter post with subscribe boxes inside the text and footnotes.
{
  const post = POSTS.sourdough;
  const sub = {
    html: `<div class="subscription-widget-wrap"><p class="subscription-widget-text">Crumb & Crust is a reader-supported publication. To receive new posts and support my work, consider becoming a free or paid subscriber.</p><form><input type="email"><button>Subscribe</button></form></div>`,
  };
  const content = blocks([...post.blocks.slice(0, 3), sub, ...post.blocks.slice(3)]);
  const r = rng(209);
  const body = `<div class="main-menu"><a href="/">Crumb & Crust</a><a href="/archive">Archive</a><a href="/about">About</a><button>Subscribe</button><a href="/signin">Sign in</a></div><div class="single-post-container"><article class="typography newsletter-post post"><div class="post-header"><h1 class="post-title">${esc(post.title)}</h1><h3 class="subtitle">Twelve months, a hundred and forty loaves, one jar called Gerald</h3><div class="post-meta">Ruth M. · Mar 12</div>${shareBar(2)}</div><div class="available-content"><div class="body markup">${content}</div></div>${sub.html}<div class="post-footer"><button>Like</button><button>Comment</button><button>Restack</button></div></article><div class="comments-section"><h3>Discussion about this post</h3>${comments(r, 14, 2)}</div><div class="related"><h3>Ready for more?</h3>${sub.html}</div></div><div class="footer-wrap"><p>© 2024 Ruth M.</p><a href="/privacy">Privacy</a> ∙ <a href="/terms">Terms</a> ∙ <a href="/collection">Collection notice</a></div>`;
  add('blog-newsletter-subscribe-boxes', page({ title: post.title, body }), expectedText(post.blocks));
}
// A Ghost-style blog whose "read more" strip is a row of <article> cards.
{
  const post = POSTS.trip;
  const r = rng(210);
  const body = `<div class="site-wrapper"><header id="gh-head" class="gh-head"><a class="gh-head-logo" href="/">Footpaths</a><ul class="nav">${['Home', 'Routes', 'Gear', 'About'].map((l) => `<li class="nav-${l.toLowerCase()}"><a href="/${l}">${l}</a></li>`).join('')}</ul><a class="gh-head-btn" href="#/portal/signup">Subscribe</a></header><main id="site-main" class="site-main"><article class="article post tag-walks"><header class="article-header gh-canvas"><section class="article-tag"><a href="/tag/walks">Walks</a></section><h1 class="article-title">${esc(post.title)}</h1><div class="article-byline">Ruth M. · Mar 12, 2024 · 3 min read</div></header><section class="gh-content gh-canvas">${blocks(post.blocks)}</section></article><aside class="read-more-wrap"><div class="read-more inner"><h2>Read more</h2>${[0, 1, 2].map((i) => `<article class="post-card post"><a class="post-card-image-link" href="/p/${i}"><img src="/i/${i}.jpg" alt=""></a><div class="post-card-content"><a href="/p/${i}"><header><h2 class="post-card-title">${esc(HEADLINES[i + 10])}</h2></header><div class="post-card-excerpt"><p>${esc(STANDFIRSTS[i + 3])}</p></div></a><footer class="post-card-meta">${i + 2} min read</footer></div></article>`).join('')}</div></aside></main><footer class="site-footer outer"><div class="inner"><section class="copyright"><a href="/">Footpaths</a> © 2024</section><nav class="site-footer-nav"><a href="/privacy">Privacy</a><a href="/contact">Contact</a></nav><div>Powered by Ghost</div></div></footer></div>`;
  add('blog-ghost-article-cards', page({ title: post.title, bodyAttrs: ' class="post-template tag-walks"', body }), expectedText(post.blocks));
}

// ---------------------------------------------------------------- Forums and Q&A

{
  const t = forumThread(rng(300));
  add('forum-thread-phpbb', t.html, t.expected);
  const d = forumThread(rng(301), { style: 'discourse' });
  add('forum-thread-discourse', d.html, d.expected);
}
{
  const r = rng(302);
  const post = (parts, votes, accepted) =>
    `<div class="post-layout"><div class="votecell"><button>Up vote</button><div class="js-vote-count">${votes}</div><button>Down vote</button>${accepted ? '<div class="accepted">Accepted</div>' : ''}</div><div class="postcell"><div class="s-prose js-post-body" itemprop="text">${blocks(parts)}</div><div class="post-signature"><div class="user-info"><a href="/u/${votes}">user${votes}</a><span class="reputation-score">${votes * 37}</span></div></div></div></div>`;
  const cm = `<div class="comments"><ul>${QA.comments.map((c) => `<li class="comment"><span class="comment-copy">${esc(c)}</span> – <a class="comment-user">someone</a> <span class="comment-date">Mar 12 at 9:14</span></li>`).join('')}</ul><a class="js-add-link">Add a comment</a></div>`;
  const answers = QA.answers
    .map((a, i) => `<div id="answer-${i}" class="answer${i === 0 ? ' accepted-answer' : ''}">${post(a, 40 - i * 13, i === 0)}${i === 0 ? cm : ''}</div>`)
    .join('');
  const side = `<div id="sidebar"><div class="s-sidebarwidget"><div class="s-sidebarwidget--header">The Overflow Blog</div><ul>${linkList(r, 'en', 3)}</ul></div><div class="module sidebar-related"><h4>Related</h4>${linkList(r, 'en', 10)}</div><div id="hot-network-questions" class="module"><h4>Hot Network Questions</h4><ul>${linkList(r, 'en', 12)}</ul></div></div>`;
  const body = `<header class="s-topbar"><a class="s-topbar--logo" href="/">Code Answers</a><ol class="s-topbar--content"><li><a href="/questions">Questions</a></li><li><a href="/tags">Tags</a></li><li><a href="/users">Users</a></li></ol><form><input placeholder="Search…"></form><a href="/login">Log in</a><a href="/signup">Sign up</a></header><div class="container"><div id="left-sidebar"><nav><ol><li><a href="/">Home</a></li><li><a href="/questions">Questions</a></li><li><a href="/tags">Tags</a></li><li><a href="/jobs">Jobs</a></li></ol></nav></div><div id="content"><div id="question-header"><h1 itemprop="name"><a href="/q/1">${esc(QA.title)}</a></h1></div><div class="question-stats">Asked 2 years ago · Modified 1 year ago · Viewed 48k times</div><div id="mainbar"><div class="question">${post(QA.question, 52, false)}</div><div id="answers"><div id="answers-header"><h2>${QA.answers.length} Answers</h2><select><option>Highest score</option></select></div>${answers}</div><h2 class="bottom-notice">Not the answer you're looking for? Browse other questions tagged <a>python</a> <a>pandas</a> or ask your own question.</h2></div>${side}</div></div><footer class="site-footer"><nav>${['About', 'Press', 'Work Here', 'Legal', 'Privacy Policy', 'Terms of Service', 'Contact Us', 'Cookie Settings'].map((l) => `<a href="/${l}">${l}</a>`).join(' ')}</nav><p>Site design / logo © 2024; user contributions licensed under CC BY-SA.</p></footer>`;
  add(
    'qa-question-answers',
    page({ title: `${QA.title} - Code Answers`, body }),
    [`user52\n${expectedText(QA.question)}`, ...QA.answers.map((a, i) => `user${40 - i * 13}\n${expectedText(a)}`)].join('\n'),
  );
}
// A Q&A page without author markers (a small site's own software): a lone <main> holds the
// question block and, beside it, the answers, each in a body wrapper (twentieth session).
{
  const r = rng(303);
  const votes = (n) => `<div class="vote-box"><button aria-label="Upvote">▲</button><span class="vote-count">${n}</span><button aria-label="Downvote">▼</button></div>`;
  const answers = QA.answers
    .map(
      (a, i) =>
        `<div class="answer" id="a-${i}">${votes(31 - i * 9)}<div class="answer-body">${blocks(a)}</div><div class="answer-meta">answered ${i + 2} days ago · <a href="/a/${i}">link</a></div></div>`,
    )
    .join('');
  const body = `<div class="topbar"><a class="brand" href="/">Data Questions</a> ${navList('en', r)}</div><main><div class="question"><h1>${esc(QA.title)}</h1>${votes(52)}${blocks(QA.question)}<div class="tags"><a href="/t/python">python</a> <a href="/t/pandas">pandas</a></div><div class="question-meta">asked 2 years ago · viewed 48k times</div></div><h2>${QA.answers.length} Answers</h2>${answers}<div class="your-answer"><h2>Your answer</h2><form><textarea></textarea><button>Post your answer</button></form></div></main><aside class="related"><h3>Related questions</h3><ul>${linkList(r, 'en', 8)}</ul></aside><div class="bottom"><a href="/about">About</a> · <a href="/privacy">Privacy</a> · © 2024 Data Questions</div>`;
  add('qa-no-authors-main', page({ title: `${QA.title} - Data Questions`, body }), [expectedText(QA.question), ...QA.answers.map((a) => expectedText(a))].join('\n'));
}
// A Q&A page in Portuguese whose meta rows ("Perguntada há 2 anos", "Modificada hoje", "Vista
// 48mil vezes", "respondida há 3 dias") are marked only by <time> and ISO timestamps in titles,
// as Stack Exchange's software writes them, and named nothing (twenty-first session).
{
  const r = rng(304);
  const when = (label, iso, shown) => `<div class="d-item">${label} <span class="relativetime" title="${iso}">${shown}</span></div>`;
  const answers = QA_PT.answers
    .map(
      (a, i) =>
        `<div class="resposta" id="r-${i}"><div class="corpo">${blocks(a)}</div><div class="rodape"><a href="/r/${i}">compartilhar</a>${when('respondida', `2024-03-0${i + 1} 10:1${i}:00Z`, `há ${i + 3} dias`)}</div></div>`,
    )
    .join('');
  const stats =
    `<div class="d-row"><div class="d-item">Perguntada <time datetime="2022-03-01T10:00:00">há 2 anos</time></div>` +
    `<div class="d-item" title="2024-02-28 09:12:45Z">Modificada hoje</div><div class="d-item">Vista 48mil vezes</div></div>`;
  const body = `<div class="barra"><a class="marca" href="/">Perguntas de Dados</a> ${navList('pt', r)}</div><main><div class="pergunta"><h1>${esc(QA_PT.title)}</h1>${stats}${blocks(QA_PT.question)}<div class="etiquetas"><a href="/t/python">python</a> <a href="/t/pandas">pandas</a></div></div><h2>${QA_PT.answers.length} respostas</h2>${answers}</main><aside class="relacionadas"><h3>Perguntas relacionadas</h3><ul>${linkList(r, 'pt', 8)}</ul></aside><div class="fim"><a href="/sobre">Sobre</a> · © 2024 Perguntas de Dados</div>`;
  add(
    'qa-meta-rows-pt',
    page({ lang: 'pt', title: `${QA_PT.title} - Perguntas de Dados`, body }),
    [expectedText(QA_PT.question), ...QA_PT.answers.map((a) => expectedText(a))].join('\n'),
  );
}
// A Reddit-like thread: the post and the discussion under it are the page.
{
  const r = rng(303);
  const op =
    'We are planning a three week trip by train from Amsterdam to Istanbul next May, taking it slowly and stopping in six or seven cities. Has anyone done something similar? Is an interrail pass worth it or is it cheaper to book each leg separately?';
  const replies = [
    'Did almost exactly this two years ago. The pass was worth it for us because we kept changing plans, but book the night trains separately as early as you can, they sell out.',
    'Book the Sofia to Istanbul sleeper in advance. It is slow and the border check is at 3am, but it is an experience.',
    'If you know your dates, single tickets booked three months ahead are usually cheaper. The pass buys you flexibility.',
    'Do not skip Ljubljana and Zagreb. Both are easy stops and the line between them is beautiful.',
    'Seat reservations are compulsory on some trains even with a pass, so budget for those.',
  ];
  const c = (t, i, depth) =>
    `<div class="comment" style="margin-left:${depth * 16}px" data-depth="${depth}"><div class="comment-header"><a class="author" href="/u/${i}">traveller_${i}</a><span class="score">${30 - i * 4} points</span><span class="live-timestamp">${i + 2} hr. ago</span></div><div class="md"><p>${esc(t)}</p></div><ul class="flat-list buttons"><li><a>permalink</a></li><li><a>save</a></li><li><a>report</a></li><li><a>reply</a></li></ul></div>`;
  const thread = replies.map((t, i) => c(t, i, i % 2)).join('');
  const body = `<div id="header"><a href="/" id="header-img">forum</a><ul class="tabmenu"><li><a>hot</a></li><li><a>new</a></li><li><a>rising</a></li><li><a>top</a></li><li><a>wiki</a></li></ul><span class="user">Want to join? <a href="/login">Log in or sign up</a> in seconds.</span></div><div class="side"><div class="spacer"><form><input placeholder="search"></form></div><div class="titlebox"><h1>r/slowtravel</h1><p>A community for travel by land and sea. Please read the rules before posting.</p><ol>${['Be kind', 'No self-promotion', 'No booking requests'].map((l) => `<li>${l}</li>`).join('')}</ol><span class="subscribers">214k readers</span></div></div><div class="content" role="main"><div class="sitetable linklisting"><div class="thing link self"><p class="title"><a class="title" href="/r/slowtravel/1">Amsterdam to Istanbul by train in three weeks – pass or single tickets?</a></p><p class="tagline">submitted 6 hours ago by planner_kim</p><div class="expando"><div class="usertext-body"><div class="md"><p>${esc(op)}</p></div></div></div><ul class="flat-list buttons"><li><a>48 comments</a></li><li><a>share</a></li><li><a>save</a></li><li><a>hide</a></li><li><a>report</a></li></ul></div></div><div class="commentarea"><div class="panestack-title"><span class="title">all 48 comments</span></div><div class="menuarea">sorted by: <a>best</a></div><div class="sitetable nestedlisting">${thread}</div></div></div><div class="footer-parent"><div class="footer">${linkList(r, 'en', 8)}</div><p class="bottommenu">Use of this site constitutes acceptance of our User Agreement and Privacy Policy.</p></div>`;
  // Each comment under its author, whom it answers, and its age, as the page shows them.
  const said = replies.map((t, i) => `traveller_${i}${i % 2 ? `, replying to traveller_${i - 1}` : ''} · ${i + 2} hr. ago\n${t}`);
  add(
    'forum-reddit-like',
    page({ title: 'Amsterdam to Istanbul by train in three weeks – pass or single tickets? : slowtravel', body }),
    ['submitted 6 hours ago by planner_kim', op, ...said].join('\n'),
  );
}

// ---------------------------------------------------------------- Docs

add('docs-configuration', docsSite(rng(400), DOCS.config), expectedText(DOCS.config.blocks));
add('docs-install', docsSite(rng(401), DOCS.install, { articleClass: 'theme-doc-markdown markdown' }), expectedText(DOCS.install.blocks));
add('docs-api-method', docsSite(rng(402), DOCS.api), expectedText(DOCS.api.blocks));
add('docs-short-page', docsSite(rng(403), DOCS.short), expectedText(DOCS.short.blocks));
add('docs-changelog', docsSite(rng(404), DOCS.changelog), expectedText(DOCS.changelog.blocks));
{
  const qa = DOCS.faq.qa;
  const content = qa.map(([q, a]) => `<details class="faq-item"><summary>${esc(q)}</summary><p>${esc(a)}</p></details>`).join('');
  add('docs-faq-details', docsSite(rng(405), DOCS.faq, { content }), qa.flat().join('\n'));
}
// Sphinx / Read the Docs: role="main" body, sphinxsidebar, a class on <html>.
{
  const doc = DOCS.config;
  const r = rng(406);
  const body = `<div class="wy-grid-for-nav"><nav data-toggle="wy-nav-shift" class="wy-nav-side"><div class="wy-side-scroll"><div class="wy-side-nav-search"><a href="/" class="icon icon-home">bucketeer</a><div class="version">3.2</div><form id="rtd-search-form" class="wy-form"><input type="text" name="q" placeholder="Search docs"></form></div><div class="wy-menu wy-menu-vertical" role="navigation" aria-label="Navigation menu"><p class="caption"><span class="caption-text">Contents</span></p><ul>${linkList(r, 'en', 14)}</ul></div></div></nav><section data-toggle="wy-nav-shift" class="wy-nav-content-wrap"><div class="wy-nav-content"><div class="rst-content"><div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li><a href="/">Docs</a> »</li><li>${esc(doc.title)}</li><li class="wy-breadcrumbs-aside"><a href="/_sources/config.rst.txt">View page source</a></li></ul><hr></div><div role="main" class="document" itemscope="itemscope" itemtype="http://schema.org/Article"><div itemprop="articleBody"><section id="configuration"><h1>${esc(doc.title)}<a class="headerlink" href="#configuration">¶</a></h1>${blocks(doc.blocks)}</section></div></div><footer><div class="rst-footer-buttons" role="navigation"><a href="/install" class="btn btn-neutral float-left">Previous</a><a href="/auth" class="btn btn-neutral float-right">Next</a></div><hr><div role="contentinfo"><p>© Copyright 2024, Bucketeer contributors.</p></div>Built with Sphinx using a theme provided by Read the Docs.</footer></div></div></section></div>`;
  add('docs-sphinx-rtd', page({ title: `${doc.title} — bucketeer 3.2 documentation`, htmlAttrs: ' class="writer-html5" data-content_root="./"', body }), expectedText(doc.blocks));
}
// A man page: one big <pre>.
{
  const text =
    'NAME\n    bkt-sync - mirror a directory to a bucket\n\nSYNOPSIS\n    bkt-sync [--delete] [--dry-run] [--exclude PATTERN]... DIR BUCKET[/PREFIX]\n\nDESCRIPTION\n    Copies every file under DIR that is missing from the bucket or differs from its\n    stored copy. With --delete, objects under PREFIX that have no file in DIR are\n    removed.\n\nOPTIONS\n    --delete           remove objects that have no local file\n    --dry-run          print what would be done and change nothing\n    --exclude PATTERN  skip paths matching the shell pattern; may be repeated\n\nEXIT STATUS\n    0 on success, 1 if any file failed, 2 on a usage error.';
  const body = `<div class="manpage-header"><a href="/">man pages</a> › <a href="/1">Section 1</a></div><div id="content"><h1>bkt-sync(1)</h1><pre class="manpage">${esc(text)}</pre></div><div class="manpage-footer"><a href="/about">About these pages</a> · Generated from bucketeer 3.2</div>`;
  add('docs-man-page', page({ title: 'bkt-sync(1) manual page', body }), text);
}

// ---------------------------------------------------------------- Commerce and other page kinds

{
  const prod = PRODUCTS.kettle;
  const r = rng(500);
  const reviews = REVIEWS.map(
    (t, i) =>
      `<div class="review" itemprop="review"><div class="stars">${5 - (i % 3)} out of 5 stars</div><p class="review-title">${['Great kettle', 'Stiff button', 'So far so good', 'Fast delivery', 'Stains'][i]}</p><div class="review-text">${esc(t)}</div><span class="review-author">Verified buyer</span><button>Helpful (${i * 3})</button></div>`,
  ).join('');
  const carousel = (h) =>
    `<section class="carousel"><h2>${h}</h2><ul>${['Glass kettle 1.5 L', 'Cordless kettle, matt black', '4-slice toaster', 'Breakfast set: kettle and toaster', 'Water filter jug', 'Descaler tablets, pack of 12'].map((n, i) => `<li class="product-card"><a href="/p/${i}"><img src="/p/${i}.jpg" alt=""><span class="name">${n}</span></a><span class="price">${19 + i * 7}.99</span><span class="rating">${4 + (i % 2) * 0.5} stars</span><button>Add to basket</button></li>`).join('')}</ul></section>`;
  const body = `${cookieBanner(0)}<header class="shop-header"><div class="promo-bar">Free delivery on orders over 40 · Next-day delivery available</div><a class="logo" href="/">HomeStore</a><form class="search"><input placeholder="Search for products"><button>Search</button></form><a href="/account">Account</a><a href="/basket">Basket (0)</a><nav class="categories"><ul>${['Kitchen', 'Appliances', 'Home', 'Garden', 'Lighting', 'Furniture', 'Bathroom', 'Sale'].map((c) => `<li><a href="/c/${c}">${c}</a></li>`).join('')}</ul></nav></header><main><ol class="breadcrumb"><li><a href="/">Home</a></li><li><a href="/c/kitchen">Kitchen</a></li><li><a href="/c/kettles">Kettles</a></li></ol><div class="product" itemscope itemtype="https://schema.org/Product"><div class="gallery"><img src="/k1.jpg" alt=""><img src="/k2.jpg" alt=""></div><div class="buy-box"><h1 itemprop="name">${esc(prod.title)}</h1><div class="rating">4.6 (212 reviews)</div><div class="price" itemprop="price">39.99</div><select><option>Brushed steel</option><option>Black</option></select><button class="add-to-basket">Add to basket</button><ul class="usp"><li>Free returns within 30 days</li><li>2 year guarantee</li></ul></div><div class="product-description" itemprop="description"><h2>Description</h2>${blocks(prod.blocks)}</div><div class="delivery-info"><h2>Delivery and returns</h2><p>Standard delivery in 3 to 5 working days. Returns are free within 30 days of delivery; items must be unused and in their original packaging.</p></div><div class="reviews"><h2>Customer reviews</h2>${reviews}<a href="/reviews">See all 212 reviews</a></div></div>${carousel('Customers also viewed')}${carousel('Frequently bought together')}</main>${footer(r, 'en', { columns: 4, links: 7, legal: 'HomeStore Ltd.' })}`;
  add('product-kettle', page({ title: `${prod.title} | HomeStore`, body }), ['Description', expectedText(prod.blocks)].join('\n'));
}
{
  const prod = PRODUCTS.boots;
  const r = rng(501);
  const ld = {
    '@context': 'https://schema.org/',
    '@type': 'Product',
    name: prod.title,
    description: prod.blocks[0],
    offers: { '@type': 'Offer', price: '129.00', priceCurrency: 'EUR' },
  };
  const body = `<header><a href="/">Summit Outdoor</a><nav>${['Men', 'Women', 'Kids', 'Footwear', 'Tents', 'Clothing', 'Outlet'].map((c) => `<a href="/${c}">${c}</a>`).join('')}</nav></header><div class="pdp"><div class="pdp-images"><img src="/b.jpg" alt=""></div><div class="pdp-info"><h1>${esc(prod.title)}</h1><p class="pdp-price">€129.00</p><div class="sizes">${[39, 40, 41, 42, 43, 44, 45, 46].map((s) => `<button>${s}</button>`).join('')}</div><button>Add to cart</button><p class="stock">In stock – ships in 1–2 days</p></div><div class="pdp-tabs"><div class="tab" id="details">${blocks(prod.blocks, { th: false })}</div></div></div><section class="recs"><h2>You may also like</h2>${teaserGrid(r, 'en', 8, { withStandfirst: false, cls: 'rec-tile' })}</section><footer><div class="newsletter"><p>Join our newsletter for 10% off your first order.</p><input><button>Join</button></div><p>© Summit Outdoor GmbH</p></footer>`;
  add(
    'product-boots-jsonld',
    page({ title: `${prod.title} – Summit Outdoor`, head: `<script type="application/ld+json">${JSON.stringify(ld)}</script>`, body }),
    expectedText(prod.blocks),
  );
}
// Listicles: an <h2> per item, ads and affiliate buttons between items.
{
  const r = rng(502);
  const items = LISTICLE.items
    .map(
      ([h, t], i) =>
        `<h2>${i + 1}. ${esc(h)}</h2><figure><img src="/plant${i}.jpg" alt=""></figure><p>${esc(t)}</p><div class="affiliate-box"><a class="btn-buy" href="/go/${i}">Buy now from 12.99</a></div>${i % 3 === 2 ? inBody.ad(r).html : ''}`,
    )
    .join('');
  add(
    'listicle-plants',
    portal(r, 'en', { title: LISTICLE.title, blocks: [] }, { content: `<p>${esc(LISTICLE.intro)}</p>${items}`, teasers: 16 }),
    [LISTICLE.intro, ...LISTICLE.items.flatMap(([h, t], i) => [`${i + 1}. ${h}`, t])].join('\n'),
  );
  const ol = `<p>${esc(LISTICLE.intro)}</p><ol class="listicle">${LISTICLE.items.map(([h, t]) => `<li><strong>${esc(h)}</strong>: ${esc(t)}</li>`).join('')}</ol>`;
  add(
    'listicle-ordered-list',
    wpBlog(rng(503), { title: LISTICLE.title, blocks: [] }, { comments: comments(rng(504), 6, 0) }).replace(
      '<div class="entry-content"></div>',
      `<div class="entry-content">${ol}</div>`,
    ),
    [LISTICLE.intro, ...LISTICLE.items.map(([h, t]) => `${h}: ${t}`)].join('\n'),
  );
}
// A recipe page: a life story, a recipe card, ratings and comments.
{
  const r = rng(505);
  const card = `<div class="wprm-recipe-container"><div class="wprm-recipe"><h2 class="wprm-recipe-name">${esc(RECIPE.title)}</h2><div class="wprm-recipe-rating">4.9 from 38 votes</div><div class="wprm-recipe-times">Prep 20 mins · Cook 50 mins · Serves 8</div><button class="wprm-print">Print Recipe</button><button>Pin Recipe</button><div class="wprm-recipe-ingredients-container"><h3>Ingredients</h3><ul>${RECIPE.ingredients.map((i) => `<li class="wprm-recipe-ingredient">${esc(i)}</li>`).join('')}</ul></div><div class="wprm-recipe-instructions-container"><h3>Instructions</h3><ol>${RECIPE.steps.map((s) => `<li class="wprm-recipe-instruction"><div class="wprm-recipe-instruction-text">${esc(s)}</div></li>`).join('')}</ol></div><div class="wprm-nutrition">Calories: 412kcal</div></div></div>`;
  const post = { title: RECIPE.title, blocks: [] };
  const html = wpBlog(r, post, { comments: comments(rng(506), 22, 0), shareInPost: true }).replace(
    '<div class="entry-content">',
    `<div class="entry-content">${RECIPE.story.map((t) => `<p>${esc(t)}</p>`).join('')}<p class="jump"><a href="#recipe">Jump to Recipe</a></p>${inBody.ad(r).html}${card}`,
  );
  add('recipe-blog-card', html, [...RECIPE.story, RECIPE.title, 'Ingredients', ...RECIPE.ingredients, 'Instructions', ...RECIPE.steps].join('\n'));
}
// A wiki article: infobox, contents box, edit links, navbox, categories.
{
  const r = rng(507);
  const info = `<table class="infobox"><caption>Millbrook Valley Railway</caption><tr><th>Locale</th><td>Millbrook</td></tr><tr><th>Opened</th><td>1871</td></tr><tr><th>Closed</th><td>2013</td></tr><tr><th>Reopened</th><td>2024</td></tr><tr><th>Length</th><td>9 miles</td></tr></table>`;
  const toc = `<div id="toc" class="toc"><div class="toctitle"><h2>Contents</h2></div><ul><li><a href="#History">1 History</a></li><li><a href="#Route">2 Route</a></li><li><a href="#Rolling_stock">3 Rolling stock</a></li></ul></div>`;
  const content = WIKI.blocks
    .map((b) => (b.h2 ? `<h2><span class="mw-headline">${esc(b.h2)}</span><span class="mw-editsection">[<a href="/edit">edit</a>]</span></h2>` : `<p>${esc(b)}</p>`))
    .join('');
  const navbox = `<div class="navbox"><table><tr><th>Heritage railways in the region</th></tr><tr><td>${linkList(r, 'en', 14).replace(/<\/?li>/g, ' · ')}</td></tr></table></div>`;
  const body = `<div id="mw-page-base"></div><div id="mw-head"><div id="p-personal"><ul><li><a>Not logged in</a></li><li><a>Talk</a></li><li><a>Contributions</a></li><li><a>Create account</a></li><li><a>Log in</a></li></ul></div><div id="left-navigation"><ul><li><a>Article</a></li><li><a>Talk</a></li></ul></div><div id="right-navigation"><ul><li><a>Read</a></li><li><a>Edit</a></li><li><a>View history</a></li></ul><form><input placeholder="Search"></form></div></div><div id="mw-panel"><div class="portal"><ul>${['Main page', 'Contents', 'Current events', 'Random article', 'About', 'Contact us', 'Donate', 'Help', 'Community portal', 'Recent changes', 'Upload file', 'What links here', 'Related changes', 'Special pages', 'Permanent link', 'Page information', 'Cite this page'].map((l) => `<li><a>${l}</a></li>`).join('')}</ul></div></div><div id="content" class="mw-body" role="main"><h1 id="firstHeading" class="firstHeading">${esc(WIKI.title)}</h1><div id="siteSub">From the free encyclopedia</div><div id="bodyContent"><div id="mw-content-text"><div class="mw-parser-output">${info}${content.replace('</p>', `</p>${toc}`)}${navbox}</div></div><div id="catlinks"><ul><li><a>Heritage railways</a></li><li><a>Railway lines opened in 1871</a></li><li><a>Standard gauge railways</a></li></ul></div></div></div><div id="footer"><ul><li>This page was last edited on 2 March 2024.</li><li>Text is available under a Creative Commons licence.</li></ul><ul><li><a>Privacy policy</a></li><li><a>About</a></li><li><a>Disclaimers</a></li></ul></div>`;
  add(
    'wiki-article-infobox',
    page({ title: `${WIKI.title} - Encyclopedia`, htmlAttrs: ' class="client-nojs vector-feature-language-in-header-enabled"', body }),
    expectedText(WIKI.blocks),
  );
}
// Press release on a corporate site.
{
  const r = rng(508);
  const body = `<header class="corp-header"><a href="/">Harbour Logistics</a><nav><ul>${['Services', 'Sustainability', 'Locations', 'Careers', 'Investors', 'Newsroom', 'Contact'].map((l) => `<li><a href="/${l}">${l}</a></li>`).join('')}</ul></nav></header><div class="page-hero"><p class="eyebrow">Press release</p><h1>${esc(PRESS.title)}</h1><p class="date">14 March 2024</p></div><div class="container"><div class="row"><div class="col-md-8 press-body">${blocks(PRESS.blocks)}</div><div class="col-md-4"><div class="card"><h3>Latest news</h3><ul>${linkList(r, 'en', 5)}</ul></div><div class="card"><h3>Downloads</h3><ul><li><a href="/p.pdf">Press release (PDF, 240 KB)</a></li><li><a href="/img.zip">Images (ZIP, 18 MB)</a></li></ul></div></div></div></div><section class="cta"><h2>Talk to our team</h2><p>Find out how we can help your business move goods more sustainably.</p><a href="/contact">Get in touch</a></section>${footer(r, 'en', { columns: 4, links: 5, legal: 'Harbour Logistics Ltd.' })}`;
  add('press-release-corporate', page({ title: `${PRESS.title} | Harbour Logistics`, body }), expectedText(PRESS.blocks));
}
// Government service page.
{
  const r = rng(509);
  const body = `<a href="#main-content" class="govuk-skip-link">Skip to main content</a>${cookieBanner(2)}<header class="govuk-header" role="banner"><a href="/" class="govuk-header__link">City Council</a><nav><ul>${['Bins and recycling', 'Council tax', 'Parking', 'Planning', 'Housing', 'Schools', 'Social care', 'Jobs'].map((l) => `<li><a href="/${l}">${l}</a></li>`).join('')}</ul></nav></header><div class="govuk-width-container"><div class="govuk-phase-banner"><strong>Beta</strong> This is a new service – your <a href="/feedback">feedback</a> will help us to improve it.</div><div class="govuk-breadcrumbs"><ol><li><a href="/">Home</a></li><li><a href="/parking">Parking</a></li><li><a href="/permits">Permits</a></li></ol></div><main class="govuk-main-wrapper" id="main-content" role="main"><div class="govuk-grid-row"><div class="govuk-grid-column-two-thirds"><h1 class="govuk-heading-xl">${esc(GOV.title)}</h1>${blocks(GOV.blocks)}<a href="/apply" role="button" class="govuk-button govuk-button--start">Start now</a></div><div class="govuk-grid-column-one-third"><aside class="app-related-items" role="complementary"><h2>Related content</h2><ul>${['Visitor permits', 'Business permits', 'Blue badge parking', 'Pay a parking fine', 'Controlled parking zones map'].map((l) => `<li><a href="/${l}">${l}</a></li>`).join('')}</ul></aside></div></div><div class="govuk-feedback"><h2>Is this page useful?</h2><button>Yes</button><button>No</button><a href="/report">Report a problem with this page</a></div></main></div><footer class="govuk-footer"><ul>${['Accessibility statement', 'Cookies', 'Privacy', 'Contact the council', 'Translate this page'].map((l) => `<li><a href="/${l}">${l}</a></li>`).join('')}</ul><p>All content is available under the Open Government Licence, except where otherwise stated.</p></footer>`;
  add(
    'gov-service-page',
    page({ title: `${GOV.title} - City Council`, htmlAttrs: ' class="govuk-template"', bodyAttrs: ' class="govuk-template__body js-enabled"', body }),
    expectedText(GOV.blocks),
  );
}
// Job posting on a careers site.
{
  const r = rng(510);
  const body = `<header><a href="/">Paystream</a><nav><a href="/product">Product</a><a href="/customers">Customers</a><a href="/careers">Careers</a><a href="/login">Log in</a></nav></header><main><div class="job-header"><a href="/careers">← All jobs</a><h1>${esc(JOB.title)}</h1><ul class="job-meta"><li>Engineering</li><li>Remote (EU)</li><li>Full time</li></ul><a class="apply" href="/apply">Apply for this job</a></div><div class="job-description">${blocks(JOB.blocks)}</div><div class="company-blurb"><h2>About Paystream</h2><p>Paystream helps 40,000 businesses pay their suppliers on time. We are 300 people in eleven countries.</p></div><div class="benefits"><h2>Benefits</h2><ul><li>30 days of holiday</li><li>Learning budget</li><li>Home office allowance</li></ul></div><div class="other-jobs"><h2>Other open roles</h2><ul>${['Product Designer', 'Data Engineer', 'Engineering Manager, Platform', 'Security Engineer', 'Customer Success Lead'].map((j) => `<li><a href="/j/${j}">${j}</a> <span>Remote</span></li>`).join('')}</ul></div></main><footer><p>Paystream is an equal opportunity employer.</p><p>© 2024 Paystream B.V.</p></footer>`;
  add('job-posting', page({ title: `${JOB.title} – Paystream`, body }), expectedText(JOB.blocks));
}
// Podcast episode page with a player and show notes.
{
  const r = rng(511);
  const body = `<header class="podcast-header"><a href="/">Deep Water</a><nav><a href="/episodes">Episodes</a><a href="/about">About</a><a href="/support">Support the show</a></nav></header><main><div class="episode-player"><button>Play</button><div class="progress"></div><span>00:00 / 58:12</span><a href="/ep112.mp3">Download</a></div><h1>${esc(PODCAST.title)}</h1><div class="subscribe-links">Listen on <a>Apple Podcasts</a> <a>Spotify</a> <a>RSS</a></div><div class="show-notes">${blocks(PODCAST.blocks)}</div><div class="episode-nav"><a href="/111">Previous episode</a><a href="/113">Next episode</a></div><section class="recent-episodes"><h2>Recent episodes</h2>${teaserGrid(r, 'en', 5, { cls: 'ep' })}</section></main><footer><p>Deep Water is an independent podcast.</p></footer>`;
  add('podcast-show-notes', page({ title: PODCAST.title, body }), expectedText(PODCAST.blocks));
}
// A landing page: the features are the content.
{
  const feats = [
    ['Works offline', 'Write and edit notes on the train or on a plane; everything syncs when you are back online.'],
    ['End-to-end encryption', 'Your notes are encrypted on your device before they leave it. We cannot read them.'],
    ['Every device', 'Apps for phones, tablets and desktops, and a web app for everything else.'],
  ];
  const body = `<header class="nav"><a href="/">Notely</a><a href="/features">Features</a><a href="/pricing">Pricing</a><a href="/blog">Blog</a><a href="/login">Log in</a><a class="cta" href="/signup">Try it free</a></header><main><section class="hero"><h1>Notes that keep up with you</h1><p class="lead">Notely is the simple note-taking app that syncs across every device you own.</p><a class="cta" href="/signup">Get started – it’s free</a></section><section class="logos"><p>Trusted by teams at</p><img alt="" src="/l1.svg"><img alt="" src="/l2.svg"></section><section class="features">${feats.map(([h, t]) => `<div class="feature"><h3>${h}</h3><p>${t}</p></div>`).join('')}</section><section class="testimonial"><blockquote>“The only note app our whole team actually uses.”</blockquote><cite>Head of Operations, a logistics company</cite></section><section class="cta-band"><h2>Start writing today</h2><a href="/signup">Create a free account</a></section></main><footer><ul><li><a>Download</a></li><li><a>Security</a></li><li><a>Privacy</a></li><li><a>Terms</a></li><li><a>Status</a></li></ul></footer>`;
  add(
    'landing-page-features',
    page({ title: 'Notely – notes that keep up with you', body }),
    ['Notely is the simple note-taking app that syncs across every device you own.', ...feats.flat()].join('\n'),
  );
}
// Pages whose body text sits in declared containers inside heavy furniture.
{
  const art = ARTICLES.council;
  const ld = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: art.title, articleBody: art.blocks.join('\n\n'), datePublished: '2024-03-12' };
  const split = art.blocks
    .map(
      (t, i) =>
        `<div class="text-block"><p>${esc(t)}</p></div>${i === 1 ? inBody.ad(rng(600)).html + inBody.relatedBox(rng(601)).html : ''}${i === 3 ? inBody.newsletter().html : ''}`,
    )
    .join('');
  add(
    'news-jsonld-split-body',
    portal(rng(602), 'en', art, {
      head: `<script type="application/ld+json">${JSON.stringify(ld)}</script>`,
      articleTag: 'div',
      content: split,
      wrap: (x) => `<div class="story-content">${x}</div>`,
      teasers: 30,
    }),
    expectedText(art.blocks),
  );
  const art2 = ARTICLES.election;
  add(
    'news-itemprop-articlebody',
    portal(rng(603), 'en', art2, { articleTag: 'div', wrap: (x) => `<div class="c-entry" itemprop="articleBody">${x}</div>`, teasers: 40 }),
    expectedText(art2.blocks),
  );
}
// A short brief on a page with a modal open, as a browser renders it (<body aria-hidden>).
add(
  'news-brief-modal-open',
  portal(rng(604), 'en', ARTICLES.transit, { bodyAttrs: ' class="modal-open" aria-hidden="true"', teasers: 22, cookieKind: 1 }),
  expectedText(ARTICLES.transit.blocks),
);
// A brief with a comment thread far longer than itself.
add('news-brief-long-comments', portal(rng(605), 'en', ARTICLES.storm, { comments: comments(rng(606), 60, 1), teasers: 10 }), expectedText(ARTICLES.storm.blocks));
// Opinion piece with an author box, a "most commented" rail and reader comments.
add(
  'news-opinion-comments',
  portal(rng(607), 'en', ARTICLES.museum, {
    standfirst: 'Returning the panels is the least a museum can do.',
    comments: comments(rng(608), 25, 0),
    afterBody: `<div class="author-box"><p>Dr Clara Mendes is a historian of church art at the university.</p></div>`,
    teasers: 14,
  }),
  expectedText(ARTICLES.museum.blocks),
);

// ---------------------------------------------------------------- write

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
for (const p of pages) {
  writeFileSync(`${OUT}${p.name}.html`, p.html);
  writeFileSync(`${OUT}${p.name}.expected.txt`, `${p.expected.trim()}\n`);
}
const names = new Set(pages.map((p) => p.name));
if (names.size !== pages.length) throw new Error('duplicate page names');
console.log(`${pages.length} pages written to ${OUT}`);
