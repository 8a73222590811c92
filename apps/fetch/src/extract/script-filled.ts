import { parsePage } from './parse-page.js';

// Where client-rendered sites mount their app: React (create-react-app, Vite) `#root`, Vue `#app`,
// Next.js `#__next`, Nuxt `#__nuxt`, Gatsby `#___gatsby`, and the hydration markers frameworks and
// hand-written sites put on the element a script fills.
const MOUNT_POINTS = '#root, #app, #__next, #__nuxt, #___gatsby, #svelte, [data-reactroot], [data-react-root], [data-hydrate], [data-v-app]';
// Inside the page's main content, an element named as the article's body.
const BODY_SLOTS = 'main [id], main [class], article [id], article [class]';
const BODY_NAME = /(?:^|[-_\s])(?:article|story|post|entry)?[-_]?(?:body|content|text)(?:$|[-_\s])/i;
// A mount point holding less text than this (a skeleton, "Loading…") is still waiting for its script.
const WAITING_TEXT_CHARS = 100;

/**
 * Whether a page's HTML, as served, leaves its content for a script to fill in: a framework's
 * mount point, a hydration marker, or an element of the main content named as its body, holding
 * next to no text and no media. Auto mode then renders the page in the browser even though the
 * served HTML has some text of its own (a header, a footer, a consent bar, a standfirst), which is
 * what its text-length test alone took for the page.
 */
export function awaitsScript(html: string): boolean {
  const document = parsePage(html);
  const waiting = (el: Element) => (el.textContent ?? '').trim().length < WAITING_TEXT_CHARS && el.querySelector('img, picture, video, iframe, canvas, svg') === null;
  for (const el of document.querySelectorAll(MOUNT_POINTS)) if (waiting(el)) return true;
  for (const el of document.querySelectorAll(BODY_SLOTS)) {
    if (!BODY_NAME.test(`${el.getAttribute('id') ?? ''} ${el.getAttribute('class') ?? ''}`)) continue;
    if ((el.textContent ?? '').trim() === '' && el.children.length === 0) return true;
  }
  return false;
}
