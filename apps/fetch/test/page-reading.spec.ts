import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HtmlExtractor } from '../src/extract/html-extractor.js';

// What a model reads from real pages (the extraction report's open findings, 2026-12-03): pages
// in the markup real sites serve (test/fixtures/reading), each run through the extractor as the
// service runs it. The checks are what a reader of the page would expect to find, in order.
const DIR = fileURLToPath(new URL('./fixtures/reading/', import.meta.url));
const extractor = new HtmlExtractor();
const read = (name: string) => extractor.extract(readFileSync(`${DIR}${name}`, 'utf8'), `https://site.example/${name}`).markdown;

/** Asserts each string appears in `text`, in this order. */
function expectInOrder(text: string, parts: (string | RegExp)[]): void {
  let at = 0;
  for (const part of parts) {
    const rest = text.slice(at);
    const m =
      typeof part === 'string'
        ? { index: rest.indexOf(part), length: part.length }
        : (() => {
            const r = part.exec(rest);
            return { index: r ? r.index : -1, length: r?.[0].length ?? 0 };
          })();
    expect(m.index, `${String(part)} after offset ${at} in:\n${text}`).toBeGreaterThanOrEqual(0);
    at += m.index + m.length;
  }
}

describe('threads: every post, with its author and date, in order (finding 1)', () => {
  it('a product page whose reviews outweigh its description: the description first, then each review under its author', () => {
    const page = extractor.extract(readFileSync(`${DIR}product-with-reviews.html`, 'utf8'), 'https://site.example/mug');
    expectInOrder(page.markdown, [
      'A steel mug with a chip-resistant enamel coat',
      /\*\*Hannah P\.\*\* · 11 February 2024/,
      'dropped on rocks twice',
      /\*\*Marcus D\.\*\*/,
      /\*\*Aoife K\.\*\*/,
    ]);
    expect(page.markdown).not.toMatch(/Helpful/);
    // A reviewer is not the page's author.
    expect(page.byline).toBeNull();
  });

  it("a shop's product page with a reviews widget in a section of its own (Shopify, Judge.me): the description first, then each review under its reviewer", () => {
    const page = extractor.extract(readFileSync(`${DIR}product-reviews-widget.html`, 'utf8'), 'https://shop.example/products/merino-socks');
    expectInOrder(page.markdown, [
      'Knitted in Leicester from a blend of merino wool',
      'A padded heel and forefoot',
      '64% merino wool',
      // Each review's title on the line after its author's (finding: titles were left out).
      /\*\*Hannah P\.\*\* · 02\/11\/2024\n\n\*\*Warm without being sweaty\*\*\n/,
      'Coast to Coast walk',
      /\*\*Marcus D\.\*\* · [^\n]*\n\n\*\*Best socks I have owned\*\*\n/,
      /\*\*Aoife K\.\*\*/,
      /\*\*Tomasz W\.\*\*/,
    ]);
    expect(page.markdown).not.toMatch(/Verified buyer|Add to cart|Write a review|Refund policy/);
    expect(page.byline).toBeNull();
  });

  it('teaser cards with their authors beside a short story are not a thread (a card whose link wraps its heading)', () => {
    const md = read('news-brief-author-cards.html');
    expect(md).toContain('Ferry fares to the mainland will stay at this year');
    expect(md).not.toMatch(/\*\*Morag Innes\*\*|Harbour wall repairs/);
  });

  it("a blog post's comment section is still not the page (WordPress comments under a short post)", () => {
    const html = readFileSync(fileURLToPath(new URL('./fixtures/corpus/blog-post-long-comments.html', import.meta.url)), 'utf8');
    const md = extractor.extract(html, 'https://site.example/blog').markdown;
    expect(md).toContain('We moved the allotment compost bins this weekend');
    expect(md).not.toMatch(/Sarah K\.|says:|Leave a Reply/);
  });

  it('Discourse (crawler view): the topic and its replies', () => {
    const md = read('thread-discourse.html');
    expectInOrder(md, [
      /\*\*marta_k\*\* · February 11, 2024, 9:12am/,
      'every email job lands in the Sidekiq retry queue',
      /\*\*jbranch\*\* · February 11, 2024, 10:03am/,
      'reads DISCOURSE_SMTP_ADDRESS at boot',
      /\*\*marta_k\*\* · February 11, 2024, 11:40am/,
      'the retry queue drained within a minute',
    ]);
    expect(md).not.toMatch(/\d Likes|Related topics|Emails not sending after rebuild/);
  });

  it('phpBB (prosilver): posts without profiles, quote buttons or signatures', () => {
    const md = read('thread-phpbb.html');
    expectInOrder(md, [
      /\*\*wintermute42\*\* · Sun Jan 14, 2024 6:02 pm/,
      'sits at the rainbow screen',
      /\*\*bootfixer\*\* · Sun Jan 14, 2024 6:40 pm/,
      'sudo rpi-eeprom-update -a',
      /\*\*wintermute42\*\* · Sun Jan 14, 2024 8:15 pm/,
      'boots from the T7 in about twelve seconds',
    ]);
    expect(md).not.toMatch(/Joined:|Forum Moderator|Please read the forum rules|Quote|Post Reply|Jump to/);
    // Each post's title is the topic's again ("Re: …"): not a title of the post's own.
    expect(md).not.toMatch(/\*\*Re: Raspberry Pi 4/);
  });

  it('Stack Exchange: the question and each answer with its author, no vote widgets', () => {
    const md = read('thread-stackexchange.html');
    expectInOrder(md, [
      /\*\*Hamza Yerlikaya\*\* · asked May 29, 2009 at 18:09/,
      "didn't push the commit to the server yet",
      /\*\*Esko Luontola\*\* · answered May 29, 2009 at 18:13/,
      '# Undo a commit & redo',
      '$ git reset HEAD~',
      'This command is responsible for the *undo*',
      /\*\*Ryan Lundy\*\* · answered Jul 28, 2011 at 22:22/,
      'prefer `git revert`',
    ]);
    expect(md).not.toMatch(/Up vote|Down vote|26834|28857|Improve this (?:question|answer)|Share\]|1211|Hot Network|The Overflow Blog/);
  });

  it('Stack Exchange: the comments under an answer, each under its author and date, after the answer', () => {
    const md = read('thread-stackexchange.html');
    expectInOrder(md, [
      'This command is responsible for the *undo*',
      /\*\*Lyle\*\*, replying to Esko Luontola · May 29, 2009 at 18:20/,
      'Note that `git reset HEAD~` also works when there is no previous commit',
      /\*\*mkarlsson\*\*, replying to Esko Luontola · Jun 2, 2009 at 9:41/,
      'If the commit was already pushed, use `git revert` instead',
      /\*\*Ryan Lundy\*\* · answered Jul 28, 2011 at 22:22/,
    ]);
    expect(md).not.toMatch(/ – |#comment57812|\[Lyle\]|\[mkarlsson\]/);
  });

  it('GitHub issue: the opening comment and the replies, no reactions or menus', () => {
    const md = read('thread-github-issue.html');
    expectInOrder(md, [
      /\*\*nkowal\*\* · Mar 4, 2024/,
      "the server's heap grows by about 40 MB",
      /\*\*hbarros\*\* · Mar 4, 2024/,
      'registers a new heartbeat timer',
      /\*\*nkowal\*\* · Mar 5, 2024/,
      'the heap stays flat',
    ]);
    expect(md).not.toMatch(/Copy link|Quote reply|Report content|react with|Assignees/);
  });

  it("GitHub issue (the React view: data-testid, CSS-module classes, <relative-time>): the issue's text, then each comment under its author", () => {
    const md = read('thread-github-issue-react.html');
    expectInOrder(md, [
      /\*\*nkowal\*\*/,
      'every time the client reconnects the process keeps the previous heartbeat timer running',
      'wirepipe --server ws://localhost:8080 --heartbeat 60',
      /\*\*hbarros\*\* · on Mar 11, 2024/,
      'without clearing the old interval',
      /\*\*nkowal\*\* · on Mar 12, 2024/,
      'the heap stays flat',
      /\*\*t-oduya\*\* · on Mar 13, 2024/,
      'We see the same on 3.1.4',
    ]);
    expect(md).not.toMatch(/React with emoji|thumbs up|Sign in to comment|Assignees|Contributor|Member\b|\[\]\(/);
  });

  it('Hacker News: the submission text, then the comments with whom each reply answers', () => {
    const md = read('thread-hackernews.html');
    expectInOrder(md, [
      /\*\*tinkerbox\*\*/,
      'I run restic to a second disk',
      /\*\*quietsre\*\* · 2024-01-16 14:20/,
      'Schedule a restore drill',
      /\*\*mkdirp\*\*, replying to quietsre · 2024-01-16 14:31/,
      'read-data-subset flag',
      /\*\*oldfloppy\*\* · 2024-01-16 15:05/,
      'Restore onto different hardware',
    ]);
    expect(md).not.toMatch(/\breply\]|\[–\]|upvote|\bhide\b|favorite/);
  });

  it('Reddit (new, custom elements naming their author in an attribute): the post, then the comment tree', () => {
    const md = read('thread-reddit-new.html');
    expectInOrder(md, [
      /\*\*ferris_fan_42\*\*/,
      'fighting the borrow checker for an hour',
      /\*\*borrowck_whisperer\*\* · 2024-03-28 16:40/,
      'a region of code where a borrow must stay valid',
      /\*\*ferris_fan_42\*\*, replying to borrowck_whisperer · 2024-03-28 17:05/,
      'cannot outlive the thing it borrows from',
      /\*\*systems_sam\*\* · 2024-03-28 18:21/,
      'a tokenizer that returns slices of its input',
    ]);
    expect(md).not.toMatch(/\bShare\b|Award|A subreddit for people learning/);
  });

  it('Reddit (old): the post, then nested comments, replies after their parent', () => {
    const md = read('thread-reddit-old.html');
    expectInOrder(md, [
      /\*\*flat_tyre_fiona\*\* · 2024-01-16 09:00/,
      'Is there any real reason to replace a boiler that still works?',
      /\*\*gas_safe_gary\*\* · 2024-01-16 09:40/,
      'Replace it when a repair costs more than a third',
      /\*\*flat_tyre_fiona\*\*, replying to gas_safe_gary · 2024-01-16 10:02/,
      'we will keep it',
      /\*\*radiator_rob\*\* · 2024-01-16 11:15/,
      'loft insulation',
    ]);
    expect(md).not.toMatch(/permalink|points|A subreddit for DIY|\[save\]/);
  });
});

describe('JSON-LD facts the text does not show (finding 2)', () => {
  const facts = (md: string) => md.slice(md.indexOf("## From the page's structured data"));

  it('a product whose price a script writes in: price, currency, availability, brand, rating', () => {
    const md = read('product-script-price.html');
    expect(md).toContain('knitted in Scotland from 100% mulesing-free merino');
    expect(facts(md)).toMatch(/^- Price: 89 GBP$/m);
    expect(facts(md)).toMatch(/^- Availability: in stock$/m);
    expect(facts(md)).toMatch(/^- Rating: 4\.7 \/ 5 \(212 reviews\)$/m);
  });

  it('a price is shown only as a number of its own (the 1 of "100%" is not a price of 1)', () => {
    const html = readFileSync(`${DIR}product-script-price.html`, 'utf8').replace('"price": 89.0', '"price": 1');
    expect(facts(extractor.extract(html, 'https://site.example/p').markdown)).toMatch(/^- Price: 1 GBP$/m);
  });

  it('a price the page shows is not repeated', () => {
    const html = readFileSync(`${DIR}product-script-price.html`, 'utf8')
      .replace('data-product-price></span>', 'data-product-price>£89.00</span>')
      .replace('<p>Ribbed cuffs', '<p>In stock. £89.00, free returns. Ribbed cuffs');
    const md = extractor.extract(html, 'https://site.example/p').markdown;
    expect(md).toContain('£89.00');
    expect(md).not.toMatch(/^- Price:/m);
    expect(md).not.toMatch(/^- Availability:/m);
  });

  it('a recipe whose card is rendered by a script (Yoast @graph): times, yield, ingredients, steps, author', () => {
    const page = extractor.extract(readFileSync(`${DIR}recipe-client-card.html`, 'utf8'), 'https://lentilpot.example/chana-masala/');
    expect(page.byline).toBe('Priya Raman');
    const block = facts(page.markdown);
    expect(block).toMatch(/^- Prep time: 10 min$/m);
    expect(block).toMatch(/^- Cook time: 25 min$/m);
    expect(block).toMatch(/^- Total time: 35 min$/m);
    expect(block).toMatch(/^- Yield: 4 servings$/m);
    expectInOrder(block, ['- Ingredients:', '  - 2 tablespoons neutral oil', '  - 2 x 400 g tins chickpeas, drained', '  - small bunch coriander']);
    expectInOrder(block, ['- Steps:', '  1. Heat the oil in a wide pan', '  4. Stir in the garam masala']);
  });

  it('an FAQ the page shows is not repeated', () => {
    const md = read('faq-visible.html');
    expect(md).toContain('How much does a resident parking permit cost?');
    expect(md).not.toContain('structured data');
  });

  it('hostile JSON-LD (deeply nested, not JSON, oversized, a @graph of 10,000 nodes, 40 scripts) costs bounded time and output', () => {
    const article = readFileSync(`${DIR}product-script-price.html`, 'utf8');
    // Under the 512 KiB a script may have, and with more nodes than the walk looks at.
    const graph = JSON.stringify({ '@graph': Array.from({ length: 10_000 }, (_, i) => ({ '@type': 'Product', offers: { price: i } })) });
    const scripts = [
      `<script type="application/ld+json">${'['.repeat(100_000)}${']'.repeat(100_000)}</script>`,
      `<script type="application/ld+json">{"@type": "Product", "offers": {"price": 1</script>`,
      `<script type="application/ld+json">{"@type": "Product", "offers": {"price": "(.*)+[" }}</script>`,
      `<script type="application/ld+json">{"@type":"Recipe","recipeIngredient":["${'salt '.repeat(120_000)}"]}</script>`,
      `<script type="application/ld+json">${graph}</script>`,
      ...Array.from({ length: 40 }, (_, i) => `<script type="application/ld+json">{"@type":"Product","brand":"${String(i).repeat(60_000)}"}</script>`),
    ].join('');
    const html = article.replace('</head>', `${scripts}</head>`);
    const started = performance.now();
    const md = extractor.extract(html, 'https://site.example/p').markdown;
    const took = performance.now() - started;
    expect(md).toContain('knitted in Scotland');
    // The block is bounded whatever the JSON-LD holds (MAX_BLOCK_CHARS plus its heading and cut note).
    const block = facts(md);
    expect(block).toContain('cut here');
    expect(block.length).toBeLessThan(6_200);
    expect(took).toBeLessThan(3_000);
  });
});

describe('tab panels: inactive tabs kept under their labels, hidden junk left out (finding 4)', () => {
  it('Bootstrap tabs (data-bs-toggle, .tab-pane): each pane under its tab label, the strip once', () => {
    const md = read('tabs-bootstrap-product.html');
    expectInOrder(md, ['### Description', 'The brushless motor', '### Specifications', 'Maximum torque: 65 Nm', '### In the box', 'two 5.0 Ah batteries']);
    expect(md.match(/Specifications/g)).toHaveLength(1);
    expect(md).not.toContain('Sign up for trade prices');
  });

  it('ARIA tabs whose inactive panels are hidden (hidden, aria-hidden, display:none): every install command', () => {
    const md = read('tabs-aria-hidden-docs.html');
    expectInOrder(md, ['### npm', 'npm install --save-dev quillstack', '### Yarn', 'yarn add --dev quillstack', '### pnpm', 'pnpm add -D quillstack', '-w flag']);
    expect(md).toMatch(/\*\*Seeing "command not found"\?\*\*\n\nYour package manager's bin directory/);
    expect(md).not.toMatch(/We use cookies|No results found|Copied to clipboard/);
  });
});

describe('a short post beside a longer block: the post wins (finding 3)', () => {
  it('WordPress: a two-paragraph notice in <main><article>, a longer "From the blog" widget column beside it', () => {
    const md = read('short-post-wordpress-sidebar.html');
    expect(md).toContain('The annual general meeting has moved from the 7th to Wednesday 14 February');
    expect(md).toContain('Nominations for the committee close on the 10th');
    expect(md).not.toMatch(/Seed swap|Water troughs|manure/i);
  });

  it("WordPress with the widget column's heading an <h1> too: the notice of the <h1> in the article's header", () => {
    const html = readFileSync(`${DIR}short-post-wordpress-sidebar.html`, 'utf8').replace(
      '<h2 class="widget-title">From the blog</h2>',
      '<h1 class="widget-title">From the blog</h1>',
    );
    const md = extractor.extract(html, 'https://site.example/agm').markdown;
    expect(md).toContain('The annual general meeting has moved from the 7th to Wednesday 14 February');
    expect(md).not.toMatch(/Seed swap|Water troughs|manure/i);
  });

  it('role=main: the notice alone, not the row with the "Latest news" column', () => {
    const md = read('short-post-role-main.html');
    expect(md).toContain('Northgate library will close on Good Friday and Easter Monday');
    expect(md).not.toMatch(/Garden waste|neighbourhood plan|Town Hall, Market Square/);
  });

  it('plain <div>s: the block of the title heading, not the longer column beside it', () => {
    const md = read('short-post-no-semantics.html');
    expect(md).toContain('there is no club night this week');
    expect(md).not.toMatch(/Castle Knights|Abbey Road|digital clocks/);
  });

  // Two <h1>s: a site's name set as one on every page (older themes), or a widget's heading; the
  // title heading is the one the page's <title> repeats, else the one that is not a link home.
  const noSemantics = readFileSync(`${DIR}short-post-no-semantics.html`, 'utf8');
  it.each([
    [
      'the site name in an <h1> linking home',
      noSemantics.replace('<div id="top"><a href="/">Riverside Chess Club</a>', '<div id="top"><h1 class="logo"><a href="/">Riverside Chess Club</a></h1>'),
    ],
    ['the longer column headed by an <h1>', noSemantics.replace('<div><b>Results round-up</b></div>', '<h1>Results round-up</h1>')],
    [
      'both, and a <title> without the site name',
      noSemantics
        .replace('<div id="top"><a href="/">Riverside Chess Club</a>', '<div id="top"><h1><a href="/">Riverside Chess Club</a></h1>')
        .replace('<div><b>Results round-up</b></div>', '<h1>Results round-up</h1>')
        .replace(' | Riverside Chess Club</title>', '</title>'),
    ],
  ])('a second <h1> (%s): the post of the title heading still wins', (_, html) => {
    const md = extractor.extract(html, 'https://chess.example/news/cancelled').markdown;
    expect(md).toContain('there is no club night this week');
    expect(md).not.toMatch(/Castle Knights|Abbey Road|digital clocks/);
  });
});

describe('a Q&A page without author markers: the question, then the answers', () => {
  it("a lone <main> holding the question block and the answers beside it: the question's text first", () => {
    const md = read('qa-no-authors.html');
    expectInOrder(md, [
      'I started a rye starter two weeks ago',
      'Is it dying?',
      'Your starter is not dying, it is hungry',
      'discard more before each feed',
      'Rye ferments faster than wheat',
      'Check the water too',
    ]);
    expect(md).not.toMatch(/Related questions|Post your answer|Log in/);
  });

  it('a flat Q&A page (question, votes and answers as siblings in <main>): the question is kept', () => {
    const html = readFileSync(fileURLToPath(new URL('./fixtures/pages/qa-page.html', import.meta.url)), 'utf8');
    const md = extractor.extract(html, 'https://askdev.example/q/1').markdown;
    expectInOrder(md, ['sort it by the value of the "age" key', 'Use sorted with a key function', 'operator.itemgetter is slightly faster']);
  });
});

describe('boilerplate without names: plain <div>s (finding 5)', () => {
  it('a breadcrumb, a share line, the repeated bar of links and the legal line beside the text go', () => {
    const md = read('plain-divs-flat.html');
    expectInOrder(md, ['From Monday 2 September, route 14', 'Route 22 will no longer serve Orchard Way', 'Season tickets already bought remain valid']);
    expect(md).not.toMatch(/You are here|Share this page|Facebook|All rights reserved|Registered in England|Privacy policy|Contact us/);
  });

  it('a reference list at the end of an article stays, links and all', () => {
    const md = read('plain-divs-boilerplate.html');
    expectInOrder(md, [
      'The clock on the market hall stopped in 1987',
      'Sources for the clock',
      '[The turret clocks of the northern dales](https://archive.example/harland-1962)',
      '[Market hall building accounts, 1851-1856](https://archive.example/mh-4-17)',
      '[Specification for a turret clock with four dials](https://archive.example/potts-1854)',
    ]);
    expect(md).not.toMatch(/More from the history pages|The mill fire of 1902|Dalesford Local History Group|Old maps/);
  });
});
