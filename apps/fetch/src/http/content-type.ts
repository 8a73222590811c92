/** spec 04: HTML, XHTML, plain text, Markdown, JSON and XML (with +json / +xml) are accepted. */
const ACCEPTED = new Set(['text/html', 'application/xhtml+xml', 'text/plain', 'text/markdown', 'text/x-markdown', 'application/json', 'text/json', 'application/xml', 'text/xml']);

export type ContentKind = 'html' | 'text' | 'markdown' | 'json' | 'xml';

export interface ParsedContentType {
  mime: string;
  charset: string | undefined;
}

export function parseContentType(header: string | undefined): ParsedContentType | undefined {
  if (!header) return undefined;
  const [mimePart, ...params] = header.split(';');
  const mime = (mimePart ?? '').trim().toLowerCase();
  const charsetParam = params.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith('charset='));
  const charset = charsetParam
    ?.slice('charset='.length)
    .replace(/^["']|["']$/g, '')
    .trim()
    .toLowerCase();
  return { mime, charset: charset || undefined };
}

/** The kind of an accepted type, or undefined for anything else (a typed error upstream of here). */
export function contentKind(mime: string): ContentKind | undefined {
  if (!ACCEPTED.has(mime) && !/^(application|text)\/[\w.-]+\+(json|xml)$/.test(mime)) return undefined;
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'text/plain') return 'text';
  if (mime.includes('markdown')) return 'markdown';
  if (mime.endsWith('json')) return 'json';
  return 'xml';
}

/** Decodes a body with the charset from the header, else from an HTML meta tag, else UTF-8. */
export function decodeBody(body: Buffer, charset: string | undefined, kind: ContentKind): string {
  let label = charset;
  if (!label && kind === 'html') {
    const head = body.subarray(0, 4096).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}
