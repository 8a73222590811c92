import { analyse } from 'chardet';
import { blankMarkup } from './markup-text.js';
import { latinReading, scriptReading } from './single-byte-reading.js';

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
 * family) names with high confidence, as a browser in that locale would, and so is one in a
 * single-byte script other than Latin (KOI8-R, windows-1251, ISO-8859-5, Greek, Hebrew, Arabic)
 * whose letters are most of its text, and Thai, DOS Cyrillic, Central European and Turkish pages
 * on the evidence of single-byte-reading.ts (detectLegacyEncoding); windows-1252 stays the answer for
 * everything else, a western page above all.
 */
export async function decodeBody(body: Buffer, charset: string | undefined, kind: ContentKind, detect: EncodingDetector = detectLegacyEncoding): Promise<string> {
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
    return new TextDecoder((await detect(body.subarray(0, SNIFF_BYTES))) ?? 'windows-1252').decode(body);
  }
}

/**
 * Tells the legacy encoding of the first SNIFF_BYTES of a body that is not UTF-8
 * (detectLegacyEncoding). chardet's statistics take tens of milliseconds on such a sample (65 ms
 * on 64 KB of random bytes), so the service runs them on its extraction threads, not its loop.
 */
export type EncodingDetector = (sample: Buffer) => string | undefined | Promise<string | undefined>;

// What is sniffed for a detector: enough text for its statistics, bounded on a large page.
const SNIFF_BYTES = 64 * 1024;
const ISO_2022_JP_ESCAPE = /\x1b\$[@B]/;
// chardet's confidence (0-100) from which its multi-byte guess is taken over windows-1252.
const MIN_CONFIDENCE = 50;
const MULTI_BYTE = new Set(['shift_jis', 'euc-jp', 'gb18030', 'big5', 'euc-kr', 'iso-2022-jp']);

// chardet's confidence for a single-byte script other than Latin: its verdicts there sit at
// 23-64 (Cyrillic lowest: a Russian, Ukrainian or Bulgarian news text in windows-1251, KOI8-R or
// ISO-8859-5 scored 23-39, with the next guess at a third of that or less), and the letter share
// below, not the confidence, is what keeps a Latin page out.
const MIN_SINGLE_BYTE_CONFIDENCE = 20;
// Share of the text's letters written with bytes 0xA0-0xFF: where a non-Latin script's letters
// are (about all of a Russian or Greek page's words, beside a few ASCII names and numbers); a
// Latin page's accented letters are a few in a hundred (French 3-4 %, Czech about 10 %).
const MIN_HIGH_LETTER_SHARE = 0.3;
const MIN_HIGH_LETTERS = 20;
// chardet's single-byte verdicts for scripts other than Latin, and what is decoded for each.
// KOI8-U is KOI8-R with Ukrainian's letters in place of a few box-drawing characters (chardet
// names both KOI8-R); windows-1255 is ISO-8859-8 with punctuation and points added. Greek is
// decided by the bytes (greekLabel): chardet names ISO-8859-7 for windows-1253 text too.
const SINGLE_BYTE: Record<string, string> = {
  'windows-1251': 'windows-1251',
  'koi8-r': 'koi8-u',
  'iso-8859-5': 'iso-8859-5',
  'iso-8859-7': 'greek',
  'windows-1253': 'greek',
  'iso-8859-8': 'windows-1255',
  'windows-1255': 'windows-1255',
  'iso-8859-6': 'iso-8859-6',
  'windows-1256': 'windows-1256',
};

/**
 * The legacy encoding of bytes that are not UTF-8, when one is to be believed over windows-1252:
 * first a Thai or DOS-Cyrillic table whose reading is that script's words where windows-1252
 * reads symbols (single-byte-reading.ts; chardet has no IBM866 and names a long Thai page
 * GB18030), then what chardet names: a multi-byte encoding with high confidence, or a single-byte
 * encoding of a script other than Latin (Cyrillic, Greek, Hebrew, Arabic) when most of the text's
 * letters are high bytes; last, a Central European or Turkish table on the page's `lang`, on
 * letters windows-1252 reads as symbols, on letters one of the family's languages spells and no
 * western language does, or on chardet's clear lead (single-byte-reading.ts).
 */
export function detectLegacyEncoding(sample: Buffer): string | undefined {
  const sniffed = sample.subarray(0, SNIFF_BYTES);
  const script = scriptReading(sniffed);
  if (script) return script;
  const verdicts = analyse(sniffed);
  const best = verdicts[0];
  const name = best?.name.toLowerCase();
  if (!best || !name) return undefined;
  if (MULTI_BYTE.has(name)) return best.confidence >= MIN_CONFIDENCE ? name : undefined;
  const single = SINGLE_BYTE[name];
  if (single && best.confidence >= MIN_SINGLE_BYTE_CONFIDENCE && mostlyHighLetters(sniffed)) return single === 'greek' ? greekLabel(sniffed) : single;
  return latinReading(sniffed, verdicts);
}

/** Whether the text outside markup (tags, scripts, styles, comments) has its letters mostly in bytes 0xA0-0xFF. */
function mostlyHighLetters(bytes: Buffer): boolean {
  const text = blankMarkup(bytes.toString('latin1'));
  let high = 0;
  let ascii = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xa0) high++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) ascii++;
  }
  return high >= MIN_HIGH_LETTERS && high >= (high + ascii) * MIN_HIGH_LETTER_SHARE;
}

/**
 * windows-1253 or ISO-8859-7: the same Greek letters but for the capital alpha with tonos (Ά),
 * 0xA2 in one and 0xB6 in the other (where windows-1253 has ¶); bytes 0x80-0x9F are
 * punctuation in windows-1253 only. windows-1253 when nothing tells, as the commoner unlabelled.
 */
function greekLabel(bytes: Buffer): string {
  const iso = bytes.includes(0xb6) && !bytes.some((b) => b >= 0x80 && b <= 0x9f);
  return iso ? 'iso-8859-7' : 'windows-1253';
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
