import { describe, expect, it } from 'vitest';
import { decodeBody } from './content-type.js';

// Report finding 10: legacy pages decoded as a browser decodes them.
const cp1252 = (s: string) => Buffer.from(new Uint8Array([...s].map((c) => ({ é: 0xe9, è: 0xe8, û: 0xfb, '£': 0xa3, œ: 0x9c })[c] ?? c.charCodeAt(0))));

describe('decodeBody', () => {
  it('with no label anywhere, bytes that are not UTF-8 are windows-1252 (the WHATWG default)', () => {
    expect(decodeBody(cp1252('Crème brûlée £18, bœuf'), undefined, 'text')).toBe('Crème brûlée £18, bœuf');
    expect(decodeBody(cp1252('<html><body><p>Café</p></body></html>'), undefined, 'html')).toBe('<html><body><p>Café</p></body></html>');
  });

  it('valid UTF-8 without a label stays UTF-8', () => {
    expect(decodeBody(Buffer.from('Crème brûlée — 東京', 'utf8'), undefined, 'text')).toBe('Crème brûlée — 東京');
  });

  it("an XML document's <?xml encoding?>", () => {
    const xml = cp1252('<?xml version="1.0" encoding="ISO-8859-1"?><rss><title>Café Société</title></rss>');
    expect(decodeBody(xml, undefined, 'xml')).toContain('Café Société');
  });

  it('a byte order mark wins over the label', () => {
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Café', 'utf8')]);
    expect(decodeBody(utf8, 'iso-8859-1', 'html')).toBe('Café');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Café', 'utf16le')]);
    expect(decodeBody(utf16, undefined, 'text')).toBe('Café');
  });

  it('the header, then the meta tag, as before', () => {
    expect(decodeBody(cp1252('<p>é</p>'), 'iso-8859-1', 'html')).toBe('<p>é</p>');
    expect(decodeBody(Buffer.from('<meta charset="shift_jis"><p>\x82\xa0</p>', 'latin1'), undefined, 'html')).toBe('<meta charset="shift_jis"><p>あ</p>');
  });

  // Unlabelled legacy pages in single-byte scripts other than Latin (report: mojibake): read as
  // the detector says when the bytes are many letters of that script, never a Latin page.
  describe('unlabelled single-byte pages', () => {
    const NEWS: Record<string, string> = {
      ru: 'Городской совет утвердил план ремонта набережной. Работы начнутся весной и продлятся около двух лет. По словам мэра, новая набережная станет любимым местом отдыха горожан, а старые деревья будут сохранены.',
      uk: 'Міська рада затвердила план ремонту набережної. Роботи почнуться навесні й триватимуть близько двох років. За словами мера, нова набережна стане улюбленим місцем відпочинку містян.',
      bg: 'Общинският съвет одобри плана за ремонт на крайбрежната алея. Работите ще започнат през пролетта и ще продължат около две години.',
      el: 'Το δημοτικό συμβούλιο ενέκρινε το σχέδιο ανακαίνισης της παραλιακής οδού. Άνοιξη: οι εργασίες θα ξεκινήσουν τότε και θα διαρκέσουν περίπου δύο χρόνια.',
      he: 'מועצת העיר אישרה את תוכנית השיפוץ של הטיילת. העבודות יתחילו באביב ויימשכו כשנתיים. לדברי ראש העיר, הטיילת החדשה תהפוך למקום הבילוי האהוב על התושבים.',
      ar: 'وافق مجلس المدينة على خطة تجديد الكورنيش. ستبدأ الأعمال في الربيع وتستمر نحو عامين. وقال رئيس البلدية إن الكورنيش الجديد سيصبح مكان النزهة المفضل لسكان المدينة.',
      fr: "Le conseil municipal a approuvé le projet de rénovation des quais. Les travaux débuteront au printemps et dureront environ deux ans ; « c'est une étape décisive », a déclaré le maire à l'issue de la séance.",
      de: 'Der Stadtrat hat den Plan zur Sanierung der Uferpromenade genehmigt. Die Arbeiten beginnen im Frühjahr und dauern etwa zwei Jahre. Größere Straßensperrungen seien nicht nötig, hieß es.',
      es: 'El ayuntamiento aprobó el plan de renovación del paseo marítimo. Las obras comenzarán en primavera y durarán unos dos años. ¿Habrá cortes de tráfico? Sí, pero breves, según el alcalde.',
      pt: 'A câmara municipal aprovou o plano de renovação da marginal. As obras começarão na primavera e durarão cerca de dois anos, segundo o presidente da câmara.',
      sv: 'Kommunfullmäktige har godkänt planen för renovering av strandpromenaden. Arbetet börjar under våren och pågår i ungefär två år.',
    };
    /** A legacy news page: English-free markup around the text, as such sites serve it. */
    const page = (text: string) =>
      `<html><head><title>${text.slice(0, 30)}</title></head><body><div id="menu"><a href="/">1</a> <a href="/n">2</a></div><h1>${text.slice(0, 40)}</h1><p>${text}</p><p>${text}</p><div class="footer">(c) 2004</div></body></html>`;
    /** `text` in a legacy single-byte encoding (the decoder's table, inverted). */
    const encode = (text: string, label: string) => {
      const table = new TextDecoder(label).decode(Uint8Array.from({ length: 256 }, (_, i) => i));
      const byChar = new Map([...table].map((c, i) => [c, i]));
      return Buffer.from([...text].map((c) => byChar.get(c) ?? 0x3f));
    };
    const cases: [string, string][] = [
      ['ru', 'koi8-r'],
      ['ru', 'windows-1251'],
      ['ru', 'iso-8859-5'],
      ['uk', 'windows-1251'],
      ['uk', 'koi8-u'],
      ['bg', 'windows-1251'],
      ['el', 'windows-1253'],
      ['el', 'iso-8859-7'],
      ['he', 'windows-1255'],
      ['he', 'iso-8859-8'],
      ['ar', 'windows-1256'],
    ];
    it.each(cases)('%s in %s', (lang, label) => {
      const html = page(NEWS[lang]!);
      expect(decodeBody(encode(html, label), undefined, 'html')).toBe(html);
    });

    it.each(['fr', 'de', 'es', 'pt', 'sv'])('a Latin page (%s) stays windows-1252', (lang) => {
      const html = page(NEWS[lang]!);
      expect(decodeBody(encode(html, 'windows-1252'), undefined, 'html')).toBe(html);
    });

    it('an English page with a few accented words stays windows-1252', () => {
      const html = page('The café on Rue de la Paix serves crème brûlée and a piña colada © 2004. The naïve façade was restored in 1998 by the same Zürich firm.');
      expect(decodeBody(encode(html, 'windows-1252'), undefined, 'html')).toBe(html);
    });
  });
});
