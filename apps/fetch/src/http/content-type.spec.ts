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
});
