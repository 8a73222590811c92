import { Writable } from 'node:stream';

/**
 * Keeps the first `limit` bytes of a stream and counts (then drops) the rest, so a program that
 * prints without end is never blocked or killed for it and the service's memory stays flat.
 */
export class OutputCapture extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private seenBytes = 0;

  constructor(private readonly limit: number) {
    super({ decodeStrings: true });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.take(chunk);
    done();
  }

  /** Takes a chunk directly (the attach demuxer), without a Writable's per-write bookkeeping. */
  take(chunk: Buffer): void {
    this.seenBytes += chunk.length;
    const room = this.limit - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      // Copy: the engine's socket buffer must not be pinned by a small slice we keep.
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
  }

  /** Every byte the program wrote to this stream, kept or not. */
  get seen(): number {
    return this.seenBytes;
  }

  get truncated(): boolean {
    return this.seenBytes > this.limit;
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }
}

/**
 * Decodes captured output for JSON: invalid UTF-8 (including a character cut at the limit)
 * becomes U+FFFD, so the reply is always valid JSON; NUL stays escaped by JSON itself.
 */
export function decodeOutput(bytes: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}
