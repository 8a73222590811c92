import { blankMarkup } from './markup-text.js';

/**
 * Unlabelled single-byte pages that chardet does not name, misnames, or names too weakly to be
 * believed over windows-1252: Thai (windows-874, which WHATWG decodes for TIS-620 too), Cyrillic
 * in the DOS code page (IBM866), Central European (windows-1250, ISO-8859-2) and Turkish
 * (windows-1254, which WHATWG decodes for ISO-8859-9 too).
 *
 * The signal is the decoded text itself. Bytes decoded with the wrong single-byte table still come
 * out as characters, but not as words: a Thai or DOS-Cyrillic page read as windows-1252 has
 * symbols, C1 controls and unassigned bytes (U+FFFD) inside its words ("Ê»ÒàÁ×Í§"), a Polish or
 * Slovak page has ³ ¹ ¿ ¾ where its ł ą ż ľ are ("wiosn¹"), and a Thai page read as a Chinese
 * multi-byte encoding (chardet's first guess for a long one) puts Thai vowel marks after nothing.
 * `misreads` counts those; the right table has none or next to none.
 *
 * Latin pages need more than that: Czech, Hungarian, Croatian, Romanian or Turkish read as
 * windows-1252 are mojibake made of letters only ("pøibližnì", "yýl", "baþkan"), which no
 * character class can see. There the page's own `lang` (a language windows-1252 cannot write: its
 * text in a non-UTF-8 page has to be in the other table) decides; else the alphabets: a Croatian
 * page read as windows-1252 writes è and æ beside š and ž, letters no one western language has
 * together, while its windows-1250 reading is every letter of Croatian's alphabet; else chardet's
 * language statistics, taken only with a clear lead over its best western verdict. A French,
 * German, Spanish, Portuguese or Swedish page has every letter in its own language's alphabet,
 * chardet's western verdict 20-40 points ahead and no misread letters, so it stays windows-1252.
 */

/**
 * A non-Latin script's single-byte table whose reading is that script's words (Thai, DOS
 * Cyrillic), or undefined. Asked before chardet's multi-byte verdict is taken: chardet names a
 * long Thai page GB18030 (confidence 59 measured), and its Thai verdict stays under 20.
 */
export function scriptReading(bytes: Buffer): string | undefined {
  const western = reading(bytes, 'windows-1252');
  if (western.misreads < MIN_MISREAD_GAIN) return undefined;
  return SCRIPTS.find((s) => scriptFits(bytes, s, western))?.label;
}

/** Whether the page is a non-Latin script's single-byte table: its letters, and none misread. */
function scriptFits(bytes: Buffer, script: Script, western: Reading): boolean {
  const own = reading(bytes, script.label, script.inScript);
  return (
    own.highLetters >= MIN_HIGH_LETTERS &&
    own.highLetters >= (own.highLetters + own.asciiLetters) * MIN_HIGH_LETTER_SHARE &&
    own.inScript >= own.highLetters * MIN_SCRIPT_SHARE &&
    own.misreads * MAX_MISREAD_RATE <= own.highLetters &&
    western.misreads >= MIN_MISREAD_GAIN + own.misreads
  );
}

/**
 * A Central European or Turkish table for a page chardet left to windows-1252 (no multi-byte or
 * non-Latin verdict taken), or undefined to keep windows-1252.
 */
export function latinReading(bytes: Buffer, verdicts: readonly { name: string; confidence: number }[]): string | undefined {
  const western = reading(bytes, 'windows-1252');
  if (western.highLetters + western.misreads === 0) return undefined;
  const lang = declaredLanguage(bytes);
  const candidates = LATIN.map((family) => ({ family, label: family.label(bytes) })).map((c) => ({ ...c, reading: reading(bytes, c.label) }));
  // 1. The page says which language it is in, and windows-1252 cannot write that language.
  const declared = lang && candidates.find((c) => c.family.languages.has(lang));
  if (declared) return declared.label;
  // 2. The other table reads as words what windows-1252 reads as symbols inside words.
  const fixing = candidates
    .filter((c) => western.misreads >= MIN_MISREAD_GAIN + c.reading.misreads && c.reading.misreads * 4 <= western.misreads)
    .sort((a, b) => a.reading.misreads - b.reading.misreads)[0];
  if (fixing) return fixing.label;
  // 3. One of the family's languages spells the other table's reading, and windows-1252's reading
  // is no western language's, on enough letters that the two tables read differently.
  const westernFit = alphabetFit(bytes, 'windows-1252', WESTERN_ALPHABETS);
  const spelt = candidates
    .map((c) => ({ ...c, fit: alphabetFit(bytes, c.label, c.family.alphabets) }))
    .filter(
      (c) =>
        c.fit.share >= MIN_ALPHABET_SHARE &&
        westernFit.share <= c.fit.share - MIN_ALPHABET_GAIN &&
        lettersReadDifferently(bytes, c.label) >= MIN_LETTERS_READ_DIFFERENTLY &&
        c.reading.misreads <= western.misreads,
    )
    .sort((a, b) => b.fit.share - a.fit.share)[0];
  if (spelt) return spelt.label;
  // 4. chardet's language statistics name the family first, clearly ahead of the western verdict.
  const best = verdicts[0];
  const westernConfidence = Math.max(0, ...verdicts.filter((v) => WESTERN.has(v.name.toLowerCase())).map((v) => v.confidence));
  const named = best && candidates.find((c) => c.family.chardetNames.has(best.name.toLowerCase()));
  if (named && best.confidence >= MIN_LATIN_CONFIDENCE && best.confidence - westernConfidence >= MIN_LATIN_LEAD && named.reading.misreads <= western.misreads) {
    return named.label;
  }
  return undefined;
}

interface Script {
  label: string;
  inScript: (code: number) => boolean;
}

// Thai is bytes 0xA1-0xFB in windows-874; DOS Cyrillic is 0x80-0xAF and 0xE0-0xF1 in IBM866, its
// box-drawing characters between (which are not letters, so a misread inside a word).
const SCRIPTS: Script[] = [
  { label: 'windows-874', inScript: (c) => c >= 0x0e00 && c <= 0x0e7f },
  { label: 'ibm866', inScript: (c) => c >= 0x0400 && c <= 0x04ff },
];

interface LatinFamily {
  /** Which table of the family: chosen by the bytes. */
  label: (bytes: Buffer) => string;
  chardetNames: ReadonlySet<string>;
  /** Languages written in this family's table and not in windows-1252 (ISO 639-1, lower case). */
  languages: ReadonlySet<string>;
  /** Each of those languages' letters beyond ASCII. */
  alphabets: readonly ReadonlySet<string>[];
}

const alphabets = (...letters: string[]) => letters.map((l) => new Set(l + l.toUpperCase()));

// The letters beyond ASCII of each language written in windows-1250 / ISO-8859-2 (Polish, Czech,
// Slovak, Hungarian, Romanian, Croatian and Bosnian, Slovenian). The two tables differ at 14 bytes
// (ISO-8859-2's ą š ś ź ž ľ ť and capitals at 0xA1-0xBE, where windows-1250 has ą ş ľ ż... and
// keeps š ś ť ž ź at 0x8A-0x9F), each table reading the other's ą as š or ľ as ž: letters of no
// single language together ("wiosnš"), which the alphabets tell.
const CENTRAL_EUROPEAN_ALPHABETS = alphabets('ąćęłńóśźż', 'áčďéěíňóřšťúůýž', 'áäčďéíĺľňóôŕšťúýž', 'áéíóöőúüű', 'ăâîşţ', 'čćđšž', 'čšž');

// The letters beyond ASCII of the languages windows-1252 is read for: French, German, Spanish,
// Portuguese, Italian, Catalan, Dutch, Swedish, Danish and Norwegian, Icelandic, Finnish, Estonian
// (English borrows French's). Left out: French's æ and Norwegian's è, each in a handful of words,
// and together Croatian's ć and č read as windows-1252.
const WESTERN_ALPHABETS = alphabets(
  'àâçéèêëîïôœùûüÿ',
  'äöüß',
  'áéíñóúü',
  'áâãàçéêíóôõú',
  'àèéìíîòóù',
  'àçèéíïòóúü',
  'áéíóúàèëïöü',
  'åäöé',
  'æøåéóô',
  'áðéíóúýþæö',
  'åäöšž',
  'äõöüšž',
);

const LATIN: LatinFamily[] = [
  {
    label: centralEuropeanTable,
    chardetNames: new Set(['windows-1250', 'iso-8859-2']),
    languages: new Set(['cs', 'sk', 'pl', 'hu', 'ro', 'hr', 'sl', 'bs', 'sr']),
    alphabets: CENTRAL_EUROPEAN_ALPHABETS,
  },
  {
    label: () => 'windows-1254',
    chardetNames: new Set(['windows-1254', 'iso-8859-9']),
    languages: new Set(['tr']),
    alphabets: alphabets('çğıöşüâîû'),
  },
];
const WESTERN = new Set(['windows-1252', 'iso-8859-1']);

/**
 * windows-1250 or ISO-8859-2. ISO-8859-2 has C1 controls at 0x80-0x9F, which no text holds, and
 * windows-1250 letters there (š ś ť ž ź), so any such byte makes the page windows-1250; else the
 * table whose letters one language's alphabet covers best, ISO-8859-2 when they tie.
 */
function centralEuropeanTable(bytes: Buffer): string {
  if (bytes.some((b) => b >= 0x80 && b <= 0x9f)) return 'windows-1250';
  const cover = (label: string) => alphabetFit(bytes, label, CENTRAL_EUROPEAN_ALPHABETS).covered;
  return cover('windows-1250') > cover('iso-8859-2') ? 'windows-1250' : 'iso-8859-2';
}

interface AlphabetFit {
  /** Letters from 0x80 in the text, as the table reads them, in the alphabet holding most of them. */
  covered: number;
  /** `covered` over all of the text's letters from 0x80 (1 when it has none). */
  share: number;
}

/** How much of the text's reading in `label` beyond ASCII one language of `alphabets` writes. */
function alphabetFit(bytes: Buffer, label: string, alphabets: readonly ReadonlySet<string>[]): AlphabetFit {
  const counts = highByteCounts(bytes);
  const { chars, flags } = tableOf(label);
  const covered = alphabets.map(() => 0);
  let letters = 0;
  for (let b = 0x80; b < 0x100; b++) {
    const n = counts[b - 0x80]!;
    if (n === 0 || !(flags[b]! & LETTER_COUNTED)) continue;
    letters += n;
    alphabets.forEach((alphabet, k) => {
      if (alphabet.has(chars[b]!)) covered[k]! += n;
    });
  }
  const best = Math.max(0, ...covered);
  return { covered: best, share: letters === 0 ? 1 : best / letters };
}

/** How many of the text's bytes `label` and windows-1252 read as different characters, a letter in either. */
function lettersReadDifferently(bytes: Buffer, label: string): number {
  const counts = highByteCounts(bytes);
  const own = tableOf(label);
  const western = tableOf('windows-1252');
  let n = 0;
  for (let b = 0x80; b < 0x100; b++) {
    if (own.chars[b] !== western.chars[b] && (own.flags[b]! | western.flags[b]!) & LETTER_COUNTED) n += counts[b - 0x80]!;
  }
  return n;
}

// How often each byte from 0x80 stands in the text, once per page: the alphabets are then
// matched per byte, not per character.
const highCounts = new WeakMap<Buffer, Uint32Array>();
function highByteCounts(bytes: Buffer): Uint32Array {
  let counts = highCounts.get(bytes);
  if (counts === undefined) {
    counts = new Uint32Array(0x80);
    const text = textOf(bytes);
    for (let i = 0; i < text.length; i++) {
      const b = text.charCodeAt(i);
      if (b >= 0x80) counts[b - 0x80]!++;
    }
    highCounts.set(bytes, counts);
  }
  return counts;
}

// What is needed of a non-Latin reading: the existing rule's letter share (content-type.ts), 90 %
// of the high letters in the script, at most one misread per 50 of them (a stray symbol), and
// windows-1252 reading at least 5 more misreads than it.
const MIN_HIGH_LETTERS = 20;
const MIN_HIGH_LETTER_SHARE = 0.3;
const MIN_SCRIPT_SHARE = 0.9;
const MAX_MISREAD_RATE = 50;
const MIN_MISREAD_GAIN = 5;
// chardet's Latin verdicts measured on a council news text (twenty languages, both tables):
// Czech, Polish, Hungarian, Turkish 41-46 with a lead of 17-26 over the western verdict,
// Romanian 12, Croatian 8, Slovak and Slovenian -1 to 2; every western text the reverse, its own
// verdict 20-48 ahead. A lead of 10 takes the first group and Romanian, no western page.
const MIN_LATIN_CONFIDENCE = 30;
const MIN_LATIN_LEAD = 10;
// The alphabet test, measured on the same news texts: every western text has all its letters in
// one western alphabet (so no gap can open); Croatian and Slovenian in windows-1250 read as
// windows-1252 have 47-56 % in one (and all in their own), Czech, Slovak and Romanian 59-69 %,
// Hungarian 87 % (left to chardet); an English text naming Žižek and Škoda beside crème and façade
// has about 70 % either way. Five letters read differently: no page is switched on the word or two
// in which the tables differ (one "crème" beside "Škoda").
const MIN_ALPHABET_SHARE = 0.9;
const MIN_ALPHABET_GAIN = 0.25;
const MIN_LETTERS_READ_DIFFERENTLY = 5;

interface Reading {
  highLetters: number;
  asciiLetters: number;
  inScript: number;
  misreads: number;
}

const SNIFF_CHARS = 64 * 1024;
// Punctuation that stands inside words in text: apostrophes, Catalan's middle dot, soft and
// non-breaking hyphens, dashes written without spaces, an ellipsis.
const INTRAWORD_PUNCTUATION = new Set([0x2019, 0x2018, 0x00b7, 0x00ad, 0x2010, 0x2011, 0x2013, 0x2014, 0x2026]);
// ª and º are letters to Unicode, but only ordinal marks after a number (1º, 2ª), never inside a word.
const ORDINALS = new Set([0x00aa, 0x00ba]);
const LETTER = /[\p{L}\p{M}]/u;
const NOT_AT_WORD_EDGE = /[\p{No}\p{Sk}\p{Sm}ªº]/u;
const THAI_CONSONANT = (c: number) => c >= 0x0e01 && c <= 0x0e2e;
const THAI_MARK = (c: number) => c === 0x0e31 || (c >= 0x0e34 && c <= 0x0e3a) || (c >= 0x0e47 && c <= 0x0e4e);

// A byte's class in a table, for reading a page a byte at a time (every table here is one byte
// one character, ASCII below 0x80): the page is not decoded once per table.
const LETTER_COUNTED = 1; // a letter or mark, not an ordinal sign
const LETTER_LIKE = 2; // a letter or mark to Unicode (ordinal signs too): what a word is made of
const WORD = 4; // a letter, or any character from 0x80 that is not a space
const HIGH = 8; // a byte from 0x80
const NEVER_TEXT = 16; // unassigned (U+FFFD) or a C1 control
const NOT_AT_EDGE = 32;
const INTRAWORD = 64;
const THAI_CONSONANT_BYTE = 128;
const THAI_MARK_BYTE = 256;

interface Table {
  chars: string[];
  flags: Uint16Array;
}
const tables = new Map<string, Table>();

function tableOf(label: string): Table {
  const known = tables.get(label);
  if (known) return known;
  const chars = [...new TextDecoder(label).decode(Uint8Array.from({ length: 256 }, (_, i) => i))];
  const flags = new Uint16Array(256);
  chars.forEach((ch, b) => {
    const code = ch.codePointAt(0) ?? 0;
    const letter = LETTER.test(ch);
    let f = 0;
    if (letter) f |= LETTER_LIKE | WORD;
    if (letter && !ORDINALS.has(code)) f |= LETTER_COUNTED;
    if (b >= 0x80) f |= HIGH;
    if (b >= 0x80 && !/\s/u.test(ch)) f |= WORD;
    if (code === 0xfffd || (code >= 0x80 && code <= 0x9f)) f |= NEVER_TEXT;
    if (NOT_AT_WORD_EDGE.test(ch)) f |= NOT_AT_EDGE;
    if (INTRAWORD_PUNCTUATION.has(code)) f |= INTRAWORD;
    if (THAI_CONSONANT(code)) f |= THAI_CONSONANT_BYTE;
    if (THAI_MARK(code)) f |= THAI_MARK_BYTE;
    flags[b] = f;
  });
  const table = { chars, flags };
  tables.set(label, table);
  return table;
}

// The sniffed bytes as Latin-1 (one character per byte) with markup blanked, once per page.
const texts = new WeakMap<Buffer, string>();
function textOf(bytes: Buffer): string {
  let text = texts.get(bytes);
  if (text === undefined) {
    text = blankMarkup(bytes.subarray(0, SNIFF_CHARS).toString('latin1'));
    texts.set(bytes, text);
  }
  return text;
}

/** The text outside markup read with `label`'s table, and how many of its characters are misread. */
function reading(bytes: Buffer, label: string, inScript?: (code: number) => boolean): Reading {
  const text = textOf(bytes);
  const { chars, flags } = tableOf(label);
  const scriptBytes = inScript ? chars.map((ch) => inScript(ch.codePointAt(0) ?? 0)) : null;
  const result: Reading = { highLetters: 0, asciiLetters: 0, inScript: 0, misreads: 0 };
  const at = (i: number) => (i >= 0 && i < text.length ? flags[text.charCodeAt(i)]! : 0);
  for (let i = 0; i < text.length; i++) {
    const b = text.charCodeAt(i);
    const f = flags[b]!;
    if (b < 0x80) {
      if (f & LETTER_COUNTED) result.asciiLetters++;
      continue;
    }
    // Unassigned bytes and C1 controls are never text, wherever they stand.
    if (f & NEVER_TEXT) {
      result.misreads++;
      continue;
    }
    if (f & LETTER_COUNTED) {
      result.highLetters++;
      if (scriptBytes?.[b]) result.inScript++;
      // A Thai vowel or tone mark follows a consonant or another mark, never anything else.
      if (f & THAI_MARK_BYTE && !(at(i - 1) & (THAI_CONSONANT_BYTE | THAI_MARK_BYTE))) result.misreads++;
      continue;
    }
    const before = at(i - 1);
    const after = at(i + 1);
    const inside = before & WORD && after & WORD;
    // At a word's edge punctuation is at home (¿Habrá, «Bonjour», Drael™), numbers and modifier
    // or maths signs are not: ¹etali¹ta is an ISO-8859-2 š read as windows-1252.
    const attached = (before | after) & LETTER_LIKE;
    if ((inside && !(f & INTRAWORD)) || (attached && f & NOT_AT_EDGE)) result.misreads++;
  }
  return result;
}

/** The page's declared language (`<html lang>`, `xml:lang`, `content-language`), its primary subtag. */
function declaredLanguage(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const lang =
    /<html\b[^>]*?\s(?:xml:)?lang\s*=\s*["']?([A-Za-z]{2,3})\b/i.exec(head)?.[1] ??
    /<meta\b[^>]*http-equiv\s*=\s*["']?content-language["']?[^>]*content\s*=\s*["']?([A-Za-z]{2,3})\b/i.exec(head)?.[1];
  return lang?.toLowerCase();
}
