import { analyse } from 'chardet';

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

/**
 * Decodes a body as a browser would, in the WHATWG order: a byte order mark, then the header's
 * charset, then the document's own declaration (HTML's <meta>, an XML declaration's encoding),
 * else UTF-8 when the bytes are valid UTF-8, else windows-1252, a browser's default for an
 * unlabelled page in a western locale (report finding 10: decoding such a page as UTF-8 turned
 * every accented letter into U+FFFD, in the title too). Between the two, an unlabelled page in a
 * legacy multi-byte script (Shift_JIS, EUC-JP, GB18030, Big5, EUC-KR, ISO-2022-JP) is decoded
 * as what a detector (chardet, the statistical detector of Mozilla's universal charset detector
 * family) names with high confidence, as a browser in that locale would; windows-1252 stays the
 * answer for everything else, since single-byte guesses among Latin code pages are unreliable.
 */
export function decodeBody(body: Buffer, charset: string | undefined, kind: ContentKind): string {
  const bom = byteOrderMark(body);
  if (bom) return new TextDecoder(bom).decode(body);
  const label = charset ?? declaredCharset(body, kind);
  if (label) {
    try {
      return new TextDecoder(label).decode(body);
    } catch {
      // An unknown label: as if there were none.
    }
  }
  // ISO-2022-JP is 7-bit, so valid UTF-8 too: its escape sequences name it before UTF-8 is tried.
  if (ISO_2022_JP_ESCAPE.test(body.subarray(0, SNIFF_BYTES).toString('latin1'))) return new TextDecoder('iso-2022-jp').decode(body);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return new TextDecoder(detectedMultiByte(body) ?? 'windows-1252').decode(body);
  }
}

// What is sniffed for a detector: enough text for its statistics, bounded on a large page.
const SNIFF_BYTES = 64 * 1024;
const ISO_2022_JP_ESCAPE = /\x1b\$[@B]/;
// chardet's confidence (0-100) from which its multi-byte guess is taken over windows-1252.
const MIN_CONFIDENCE = 50;
const MULTI_BYTE = new Set(['shift_jis', 'euc-jp', 'gb18030', 'big5', 'euc-kr', 'iso-2022-jp']);

function detectedMultiByte(body: Buffer): string | undefined {
  const best = analyse(body.subarray(0, SNIFF_BYTES))[0];
  const name = best?.name.toLowerCase();
  return best && name && best.confidence >= MIN_CONFIDENCE && MULTI_BYTE.has(name) ? name : undefined;
}

function byteOrderMark(body: Buffer): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  return undefined;
}

function declaredCharset(body: Buffer, kind: ContentKind): string | undefined {
  if (kind !== 'html' && kind !== 'xml') return undefined;
  const head = body.subarray(0, 4096).toString('latin1');
  // XHTML (an html kind) is XML, and may declare its encoding either way.
  const declared =
    (kind === 'html' ? /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1] : undefined) ?? /^\s*<\?xml[^>]*\sencoding\s*=\s*["']([\w.:-]+)["']/i.exec(head)?.[1];
  return declared?.toLowerCase();
}
