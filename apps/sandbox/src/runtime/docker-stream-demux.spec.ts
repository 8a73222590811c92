import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { demuxDockerStream } from './docker-stream-demux.js';
import { OutputCapture } from './output-capture.js';

const frame = (type: number, text: string) => {
  const payload = Buffer.from(text);
  const h = Buffer.alloc(8);
  h[0] = type;
  h.writeUInt32BE(payload.length, 4);
  return Buffer.concat([h, payload]);
};

function feed(chunks: Buffer[], limit = 1024) {
  const stream = new PassThrough();
  const out = new OutputCapture(limit);
  const err = new OutputCapture(limit);
  demuxDockerStream(stream, out, err);
  for (const c of chunks) stream.write(c);
  return { out, err };
}

describe('demuxDockerStream', () => {
  it('splits stdout and stderr frames, whatever the chunk boundaries (inside a header or a payload)', () => {
    const all = Buffer.concat([frame(1, 'hello '), frame(2, 'oops'), frame(1, 'world'), frame(0, 'stdin echo'), frame(2, '!')]);
    for (const cut of [1, 3, 7, 8, 9, 13, all.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < all.length; i += cut) chunks.push(all.subarray(i, i + cut));
      const { out, err } = feed(chunks);
      expect(out.bytes.toString(), `chunks of ${cut}`).toBe('hello world');
      expect(err.bytes.toString(), `chunks of ${cut}`).toBe('oops!');
    }
  });

  it('counts every byte but keeps only the limit, and copies what it keeps (the socket chunk is not pinned)', () => {
    const chunk = frame(1, 'y\n'.repeat(1000));
    const { out } = feed([chunk, chunk], 100);
    expect(out.seen).toBe(4000);
    expect(out.truncated).toBe(true);
    expect(out.bytes.length).toBe(100);
    chunk.fill(0);
    expect(out.bytes.toString()).toBe('y\n'.repeat(50));
  });

  it('a stream that is not multiplexed (TTY) is passed through as stdout', () => {
    const { out, err } = feed([Buffer.from('plain text, no headers'), Buffer.from(' more')]);
    expect(out.bytes.toString()).toBe('plain text, no headers more');
    expect(err.bytes.length).toBe(0);
  });
});
