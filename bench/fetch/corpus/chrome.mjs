// Site furniture for the corpus pages: headers, menus, rails, footers, cookie banners, share
// bars, comment sections, written the many ways real sites write them. Nothing here is content;
// the content is rendered by blocks() and its expected text by expectedText().
import { COMMENTS, COMMENT_NAMES, HEADLINES, NAV, STANDFIRSTS, FOREIGN_HEADLINES } from './texts.mjs';

/** A small deterministic generator, so the corpus is the same on every run. */
export function rng(seed) {
  let s = seed >>> 0 || 1;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return { next, pick: (xs) => xs[Math.floor(next() * xs.length)], int: (a, b) => a + Math.floor(next() * (b - a + 1)) };
}

export const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const slug = (s) =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60) || 'x';

/** Content blocks as HTML; `style` varies the markup the way different CMSs write it. */
export function blocks(list, style = {}) {
  const p = style.p ?? ((t) => `<p>${esc(t)}</p>`);
  return list
    .map((b) => {
      if (typeof b === 'string') return p(b);
      if (b.h2) return `<h2${style.hClass ? ` class="${style.hClass}"` : ''}>${esc(b.h2)}</h2>`;
      if (b.h3) return `<h3>${esc(b.h3)}</h3>`;
      if (b.ul) return `<ul>${b.ul.map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`;
      if (b.ol) return `<ol>${b.ol.map((i) => `<li>${esc(i)}</li>`).join('')}</ol>`;
      if (b.quote) return `<blockquote><p>${esc(b.quote)}</p></blockquote>`;
      if (b.code) return `<pre><code>${esc(b.code)}</code></pre>`;
      if (b.table)
        return `<table><tbody>${b.table.map((r, i) => `<tr>${r.map((c) => (i === 0 && style.th !== false ? `<th>${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('')}</tbody></table>`;
      if (b.caption) return `<figure><img src="/img/${slug(b.caption)}.jpg" alt=""><figcaption>${esc(b.caption)}</figcaption></figure>`;
      if (b.html) return b.html; // furniture placed inside the body (ads, inline links): not content
      throw new Error(`unknown block ${JSON.stringify(b)}`);
    })
    .join('\n');
}

/** The expected text of content blocks: one line per paragraph, heading, item or row. */
export function expectedText(list) {
  const out = [];
  for (const b of list) {
    if (typeof b === 'string') out.push(b);
    else if (b.h2 || b.h3) out.push(b.h2 ?? b.h3);
    else if (b.ul || b.ol) out.push(...(b.ul ?? b.ol));
    else if (b.quote) out.push(b.quote);
    else if (b.code) out.push(b.code);
    else if (b.table) out.push(...b.table.map((r) => r.join(' ')));
    else if (b.caption) out.push(b.caption);
  }
  return out.join('\n');
}

/** Furniture blocks to splice into a body (ads, inline related links, newsletter boxes). */
export const inBody = {
  ad: (r) => ({ html: `<div class="ad-slot ad-inline" data-slot="mid-${r.int(1, 9)}"><span class="ad-label">Advertisement</span><div class="ad-container"></div></div>` }),
  readMore: (r) => ({ html: `<p class="read-more"><strong>Read more:</strong> <a href="/news/${r.int(1000, 9999)}">${esc(r.pick(HEADLINES))}</a></p>` }),
  relatedBox: (r) => ({
    html: `<aside class="related-inline"><h4>Related</h4><ul>${[0, 1, 2].map(() => `<li><a href="/news/${r.int(1000, 9999)}">${esc(r.pick(HEADLINES))}</a></li>`).join('')}</ul></aside>`,
  }),
  newsletter: () => ({
    html: `<div class="newsletter-signup"><h3>Get the morning briefing</h3><p>The day’s top stories in your inbox every morning at seven.</p><form><input type="email" placeholder="Your email"><button>Sign up</button></form></div>`,
  }),
  video: () => ({ html: `<div class="video-player"><div class="vp-title">Watch: our reporter explains what happens next</div><div class="vp-duration">2:14</div></div>` }),
};

export function navList(lang, r, n = 1) {
  const labels = NAV[lang] ?? NAV.en;
  const out = [];
  for (let i = 0; i < n; i++) out.push(...labels);
  return out.map((l, i) => `<li><a href="/${slug(l)}${i >= labels.length ? `/${i}` : ''}">${esc(l)}</a></li>`).join('');
}

function headlinesFor(lang) {
  return FOREIGN_HEADLINES[lang] ?? HEADLINES;
}

export function teaserGrid(r, lang, n, { withStandfirst = true, cls = 'teaser', tag = 'div' } = {}) {
  const heads = headlinesFor(lang);
  return Array.from({ length: n }, (_, i) => {
    const h = heads[(i * 7 + r.int(0, heads.length)) % heads.length];
    const sf = withStandfirst && lang === 'en' ? `<p class="${cls}__summary">${esc(r.pick(STANDFIRSTS))}</p>` : '';
    return `<${tag} class="${cls}"><a href="/story/${r.int(10000, 99999)}"><img src="/thumb/${i}.jpg" alt=""><h3 class="${cls}__title">${esc(h)}</h3></a>${sf}<span class="${cls}__time">${r.int(1, 59)} min ago</span></${tag}>`;
  }).join('');
}

export function linkList(r, lang, n) {
  const heads = headlinesFor(lang);
  return Array.from({ length: n }, (_, i) => `<li><a href="/a/${r.int(1000, 99999)}">${esc(heads[(i + r.int(0, 5)) % heads.length])}</a></li>`).join('');
}

export const cookieBanner = (kind = 0) =>
  [
    `<div id="cookie-banner" class="cookie-consent"><p>We use cookies to give you the best experience on our website, to analyse our traffic and to show you personalised advertising. By clicking “Accept all” you agree to the storing of cookies on your device. You can change your choices at any time in our privacy settings.</p><button>Accept all</button><button>Manage settings</button></div>`,
    `<div class="gdpr-overlay" role="dialog" aria-label="Privacy"><div class="gdpr-box"><h2>Your privacy</h2><p>We and our 214 partners store and access information on your device, such as cookies, and process personal data such as unique identifiers for personalised ads and content, ad and content measurement, audience insights and product development.</p><a href="/privacy">Read our privacy policy</a><button>Agree</button></div></div>`,
    `<div class="cc-window"><span class="cc-message">This website uses cookies to ensure you get the best experience.</span><a class="cc-link" href="/cookies">Learn more</a><a class="cc-btn">Got it!</a></div>`,
  ][kind];

export const shareBar = (style = 0) =>
  [
    `<div class="share-bar"><span>Share this article</span><a href="#" class="share-facebook">Facebook</a><a href="#" class="share-twitter">Twitter</a><a href="#" class="share-email">Email</a><a href="#" class="share-whatsapp">WhatsApp</a></div>`,
    `<ul class="social-share"><li><a href="#">Share on Facebook</a></li><li><a href="#">Share on X</a></li><li><a href="#">Share on LinkedIn</a></li><li><a href="#">Copy link</a></li></ul>`,
    `<div class="sharing"><button>Share</button><button>Save</button><button>Gift this article</button><span class="comments-count">214 comments</span></div>`,
  ][style];

export function footer(r, lang, { columns = 4, links = 8, cls = 'site-footer', legal = 'All rights reserved.' } = {}) {
  const labels = NAV[lang] ?? NAV.en;
  const cols = Array.from(
    { length: columns },
    (_, c) =>
      `<div class="footer-col"><h4>${esc(labels[c % labels.length])}</h4><ul>${Array.from({ length: links }, (_, i) => `<li><a href="/f/${c}/${i}">${esc(labels[(c + i) % labels.length])} ${i + 1}</a></li>`).join('')}</ul></div>`,
  ).join('');
  const extra =
    lang === 'en'
      ? '<ul class="legal"><li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li><li><a href="/terms">Terms and conditions</a></li><li><a href="/privacy">Privacy notice</a></li><li><a href="/cookies">Cookie policy</a></li><li><a href="/accessibility">Accessibility</a></li></ul>'
      : '';
  return `<footer class="${cls}"><div class="footer-inner">${cols}</div>${extra}<p class="copyright">© 2024 ${legal}</p></footer>`;
}

/** A comment section in one of several markups (WordPress, Disqus-like, a news site's own). */
export function comments(r, n, style = 0) {
  const one = (i) => {
    const name = esc(COMMENT_NAMES[(i * 3 + r.int(0, 4)) % COMMENT_NAMES.length]);
    const text = esc(COMMENTS[(i * 7 + r.int(0, 3)) % COMMENTS.length]);
    if (style === 0)
      return `<li id="comment-${i}" class="comment even thread-even depth-1"><article class="comment-body"><footer class="comment-meta"><div class="comment-author vcard"><b class="fn">${name}</b> <span class="says">says:</span></div><div class="comment-metadata"><a href="#comment-${i}"><time>March ${1 + (i % 28)}, 2024 at ${1 + (i % 12)}:${10 + (i % 50)} pm</time></a></div></footer><div class="comment-content"><p>${text}</p></div><div class="reply"><a class="comment-reply-link" href="#respond">Reply</a></div></article></li>`;
    if (style === 1)
      return `<div class="post-message-container"><div class="post-byline"><span class="author">${name}</span> <span class="time-ago">${1 + (i % 9)} hours ago</span></div><div class="post-message"><p>${text}</p></div><div class="post-footer"><a class="vote-up">${i % 13} upvotes</a> <a class="reply">Reply</a></div></div>`;
    return `<div class="c-item"><div class="c-head"><span class="c-user">${name}</span><span class="c-date">${1 + (i % 23)}h</span></div><div class="c-text">${text}</div><div class="c-actions"><button>Like</button><button>Report</button></div></div>`;
  };
  const list = Array.from({ length: n }, (_, i) => one(i)).join('');
  if (style === 0)
    return `<div id="comments" class="comments-area"><h2 class="comments-title">${n} thoughts on this post</h2><ol class="comment-list">${list}</ol><div id="respond" class="comment-respond"><h3>Leave a Reply</h3><form><textarea></textarea><button>Post Comment</button></form></div></div>`;
  if (style === 1) return `<div id="disqus_thread"><div class="thread-header">${n} Comments</div><div class="posts">${list}</div></div>`;
  return `<section class="reader-responses"><h3>Reader responses (${n})</h3>${list}</section>`;
}

export function page({ lang = 'en', title, head = '', htmlAttrs = '', bodyAttrs = '', body }) {
  return `<!DOCTYPE html>\n<html lang="${lang}"${htmlAttrs}>\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${esc(title)}</title>\n<link rel="stylesheet" href="/static/site.css">\n${head}\n<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag('js', new Date());</script>\n</head>\n<body${bodyAttrs}>\n${body}\n<script src="/static/app.js" defer></script>\n</body>\n</html>\n`;
}
