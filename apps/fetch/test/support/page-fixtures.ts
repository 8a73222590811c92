import { readFileSync, readdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';

export const PAGES_DIR = fileURLToPath(new URL('../fixtures/pages/', import.meta.url));

export interface FixturePage {
  name: string;
  html: string;
  expected: string;
  meta: { title?: string; byline?: string; canonical?: string; lang?: string; description?: string; needs_browser?: boolean };
}

export function loadPages(): FixturePage[] {
  const manifest = JSON.parse(readFileSync(`${PAGES_DIR}manifest.json`, 'utf8')) as Record<string, FixturePage['meta']>;
  return readdirSync(PAGES_DIR)
    .filter((f) => f.endsWith('.html'))
    .map((f) => f.slice(0, -'.html'.length))
    .sort()
    .map((name) => ({
      name,
      html: readFileSync(`${PAGES_DIR}${name}.html`, 'utf8'),
      expected: readFileSync(`${PAGES_DIR}${name}.expected.txt`, 'utf8'),
      meta: manifest[name] ?? {},
    }));
}

const CHALLENGE = `<!doctype html><html><head><title>Just a moment...</title></head><body><p>Checking your browser before accessing the site.</p>
<script>document.cookie = "clearance=ok; path=/"; setTimeout(() => location.reload(), 50);</script></body></html>`;

/**
 * Serves /pages/<name>: the fixture as stored, except `challenge-*` pages, which first answer
 * 503 with a script that sets a cookie and reloads (the shape of a bot challenge): only a real
 * browser gets through.
 */
export function servePages(pages: FixturePage[]) {
  const byName = new Map(pages.map((p) => [p.name, p]));
  return (req: IncomingMessage, res: ServerResponse): void => {
    const name = (req.url ?? '').replace(/^\/pages\//, '').replace(/[?#].*$/, '');
    const page = byName.get(name);
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such fixture');
      return;
    }
    if (name.startsWith('challenge-') && !/clearance=ok/.test(req.headers.cookie ?? '')) {
      res.writeHead(503, { 'content-type': 'text/html; charset=utf-8' }).end(CHALLENGE);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page.html);
  };
}
