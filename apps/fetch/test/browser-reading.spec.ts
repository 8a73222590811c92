import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { MAX_RENDERED_HTML_CHARS } from '../src/browser/browser-pool.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, failure, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// Pages whose article a script asks the site's API for after load, while the served HTML already
// has text of its own (extraction pass, finding 4): the browser waits for that request, and auto
// mode goes to the browser for such a page though its served HTML is past the thin-page test.
let site: FixtureServer;
let runtime: FetchRuntime;

const paragraphs = Array.from({ length: 8 }, (_, i) => `Paragraph ${i + 1} of the survey story: the boats mapped another stretch of the shelf edge, and the chart was redrawn.`);
const chrome = `<header><nav><a href="/">Fieldnotes</a> <a href="/topics">Topics</a> <a href="/climate">Climate</a> <a href="/oceans">Oceans</a></nav></header>
<div id="cookie-banner">We use cookies and similar technologies to understand how you use Fieldnotes, to personalise content and to show you relevant advertising. <button>Accept</button></div>`;
const footer = `<footer><p>Fieldnotes is an independent, reader-funded publication about the living world. Support our journalism from three pounds a month.</p></footer>`;
// The article is asked for on load; the API answers after a while, as a real one does.
// `whole`: the app renders the whole article; otherwise only its paragraphs go into the slot.
const fill = (target: string, whole: boolean) => `<script>
window.addEventListener('load', () => fetch('/api/article.json').then((r) => r.json()).then((a) => {
  const body = a.paragraphs.map((p) => '<p>' + p + '</p>').join('');
  document.getElementById('${target}').innerHTML = ${whole} ? '<article><h1>' + a.title + '</h1>' + body + '</article>' : body;
}));
</script>`;

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/api/article.json':
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ title: 'Mapping the shelf edge', paragraphs }));
        }, 800);
        return;
      case '/shell':
        // A client-rendered app: its mount point holds a skeleton, the page around it has text.
        return html(
          res,
          `<html><head><title>Fieldnotes</title></head><body>${chrome}<div id="root"><p class="loading">Loading article…</p></div>${footer}${fill('root', true)}</body></html>`,
        );
      case '/teaser':
        // Server-rendered headline and standfirst; the body is hydrated into an empty slot.
        return html(
          res,
          `<html><head><title>Mapping the shelf edge</title></head><body><main><h1>Mapping the shelf edge</h1><p class="dek">Only a quarter of the seabed has been mapped at high resolution. A fleet of uncrewed survey boats and a great deal of money are trying to change that before the end of the decade, and the first charts are in.</p><div id="article-body"></div></main>${fill('article-body', false)}</body></html>`,
        );
      case '/components-declarative':
        // A declarative shadow root whose slot shows the host's own paragraph.
        return html(
          res,
          `<html><head><title>Components</title></head><body><main><h1>Components</h1>
<report-card><template shadowrootmode="open"><section><p>${paragraphs[0]}</p><p>${paragraphs[1]}</p><slot></slot></section></template><p>${paragraphs[2]}</p></report-card></main></body></html>`,
        );
      case '/components-script':
        // A web component that attaches its shadow root from a script.
        return html(
          res,
          `<html><head><title>Components</title></head><body><main><h1>Components</h1><story-body></story-body></main>
<script>customElements.define('story-body', class extends HTMLElement { connectedCallback() { this.attachShadow({ mode: 'open' }).innerHTML = '${paragraphs
            .slice(3, 7)
            .map((p) => `<p>${p}</p>`)
            .join('')}'; } });</script></body></html>`,
        );
      case '/framed':
        return html(
          res,
          `<html><head><title>Annual report</title></head><body><main><h1>Annual report</h1><p>Read the trustees' report below.</p><iframe src="/report-inner"></iframe></main></body></html>`,
        );
      case '/report-inner':
        return html(res, `<html><body><article>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article></body></html>`);
      case '/static':
        return html(
          res,
          `<html><head><title>Static</title></head><body><main><div id="root"><article><h1>Static</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article></div></main><script>console.log('hello');</script></body></html>`,
        );
      case '/huge-dom':
        // A few hundred bytes that render to more than the bound, in well under a second: a comment,
        // which is the page's HTML but has no layout (a text node this long took the render past its
        // timeout on a slow machine under CI, laying it out).
        return html(
          res,
          `<html><head><title>Huge</title></head><body><p>Short page.</p><script>document.body.append(document.createComment('x'.repeat(${MAX_RENDERED_HTML_CHARS + 1_000_000})));</script></body></html>`,
        );
      case '/huge-dom-lying':
        // The same, with the page's own serialisers made to say it is small (and its same-site
        // frame, to hand back a body of any size).
        return html(
          res,
          `<html><head><title>Huge</title></head><body><p>Short page.</p><script>
document.body.append(document.createComment('x'.repeat(${MAX_RENDERED_HTML_CHARS + 1_000_000})));
Object.defineProperty(Element.prototype, 'outerHTML', { get() { return '<html></html>'; } });
XMLSerializer.prototype.serializeToString = () => '';
</script></body></html>`,
        );
      case '/huge-frame':
        return html(
          res,
          `<html><head><title>Framed</title></head><body><main><h1>Framed</h1><p>${paragraphs[0]}</p><iframe src="/huge-frame-inner"></iframe></main></body></html>`,
        );
      case '/huge-frame-inner':
        return html(
          res,
          `<html><body><p>${paragraphs.join(' ')}</p><script>const big = 'y'.repeat(${MAX_RENDERED_HTML_CHARS + 1_000_000}); Object.defineProperty(document.body, 'innerHTML', { get: () => big });</script></body></html>`,
        );
      default:
        res.writeHead(404).end();
    }
  });
  // The renderer's memory bound set far above what these pages take (laying out the huge DOM alone
  // took more than 512 MiB): the HTML length bound is what the huge pages test.
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false, rendererMaxMb: 8192 });
  await runtime.browser!.warm();
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

describe('text the main document does not hold (extraction pass, finding 12)', () => {
  it('the browser reads a declarative shadow root, with what its slot shows in its place', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/components-declarative'), render: 'browser' });
    for (const p of paragraphs.slice(0, 3)) expect(page.content).toContain(p);
    expect(page.content.indexOf(paragraphs[1]!)).toBeLessThan(page.content.indexOf(paragraphs[2]!));
  });

  it('the browser reads a shadow root a script attaches', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/components-script'), render: 'browser' });
    for (const p of paragraphs.slice(3, 7)) expect(page.content).toContain(p);
  });

  it('the browser reads a same-site frame holding a document where the frame stands', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/framed'), render: 'browser' });
    expect(page.content).toContain('Paragraph 8 of the survey story');
  });
});

describe('content a script fetches after load', () => {
  it('the browser waits for the page’s own API request though the page already had 200 characters of chrome', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/shell'), render: 'browser' });
    expect(page.content).toContain('Paragraph 8 of the survey story');
  });

  it('auto: a mount point left to a script sends the page to the browser', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/shell'), render: 'auto' });
    expect(page.content).toContain('Paragraph 1 of the survey story');
  });

  it('auto: a server-rendered standfirst over an empty body slot sends the page to the browser', async () => {
    const plain = await runtime.pages.fetch({ url: site.url('/teaser'), render: 'http' });
    expect(plain.content).not.toContain('Paragraph 1');
    const page = await runtime.pages.fetch({ url: site.url('/teaser'), render: 'auto' });
    expect(page.content).toContain('Only a quarter of the seabed');
    expect(page.content).toContain('Paragraph 8 of the survey story');
  });

  it('auto: a page whose mount point the server filled stays on the HTTP path', async () => {
    const hits = site.hits.length;
    const page = await runtime.pages.fetch({ url: site.url('/static'), render: 'auto' });
    expect(page.content).toContain('Paragraph 8 of the survey story');
    // One request: the HTML over HTTP; a browser render would have asked again.
    expect(site.hits.length - hits).toBe(1);
  });
});

describe('a page that renders to more than the bound', () => {
  it('is refused body_too_large before its HTML leaves the browser, however its scripts answer; the next page is read', async () => {
    for (const path of ['/huge-dom', '/huge-dom-lying']) {
      const err = await failure(runtime.pages.fetch({ url: site.url(path), render: 'browser' }));
      expect(err.code, path).toBe('body_too_large');
      expect(err.details).toMatchObject({ max_chars: MAX_RENDERED_HTML_CHARS });
    }
    const page = await runtime.pages.fetch({ url: site.url('/static'), render: 'browser' });
    expect(page.content).toContain('Paragraph 8 of the survey story');
  });

  it('a same-site frame that hands back a body past the bound is left out, the page around it read', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/huge-frame'), render: 'browser' });
    expect(page.content).toContain(paragraphs[0]);
    expect(page.content).not.toContain('yyyyyyyy');
  });
});
