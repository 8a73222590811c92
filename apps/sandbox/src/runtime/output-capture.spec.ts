import { describe, expect, it } from 'vitest';
import { decodeOutput, OutputCapture } from './output-capture.js';

const write = (c: OutputCapture, b: Buffer) => new Promise<void>((r) => c.write(b, () => r()));

describe('OutputCapture', () => {
  it('keeps the first limit bytes, keeps accepting, and reports the cut', async () => {
    const c = new OutputCapture(10);
    await write(c, Buffer.from('12345'));
    await write(c, Buffer.from('67890abc'));
    for (let i = 0; i < 1000; i++) await write(c, Buffer.alloc(1024, 'z'));
    expect(c.bytes.toString()).toBe('1234567890');
    expect(c.truncated).toBe(true);
  });

  it('is not truncated at exactly the limit', async () => {
    const c = new OutputCapture(4);
    await write(c, Buffer.from('abcd'));
    expect(c.truncated).toBe(false);
  });

  it("finds the launcher's end mark cut across chunks, with the output before it and the status", async () => {
    const c = new OutputCapture(1024);
    const found = c.watchEnd('drael-end-abc');
    for (const part of ['hello\n', 'drael-end-a', 'bc', ' 1', '7\n']) c.take(Buffer.from(part));
    await expect(found).resolves.toEqual({ at: 6, status: 17 });
  });

  it('finds the end mark past the bytes it keeps, and not a mark with another nonce', async () => {
    const c = new OutputCapture(4);
    const found = c.watchEnd('drael-end-abc');
    c.take(Buffer.from('drael-end-abd 0\n'));
    c.take(Buffer.alloc(5000, 'x'));
    c.take(Buffer.from('drael-end-abc 0\n'));
    await expect(found).resolves.toEqual({ at: 5016, status: 0 });
    expect(c.bytes.toString()).toBe('drae');
  });

  it('decodes invalid UTF-8 and a character cut at the limit to U+FFFD', () => {
    expect(decodeOutput(Buffer.from([0x61, 0xff, 0x62]))).toBe('a\uFFFDb');
    expect(decodeOutput(Buffer.from('é').subarray(0, 1))).toBe('\uFFFD');
  });
});
