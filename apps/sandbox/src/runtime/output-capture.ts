import { Writable } from 'node:stream';

/**
 * Keeps the first `limit` bytes of a stream and counts (then drops) the rest, so a program that
 * prints without end is never blocked or killed for it and the service's memory stays flat.
 */
export class OutputCapture extends Writable {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private seenBytes = 0;
  private endMark: EndMarkScanner | undefined;

  constructor(private readonly limit: number) {
    super({ decodeStrings: true });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.take(chunk);
    done();
  }

  /** Takes a chunk directly (the attach demuxer), without a Writable's per-write bookkeeping. */
  take(chunk: Buffer): void {
    this.endMark?.scan(chunk, this.seenBytes);
    this.seenBytes += chunk.length;
    const room = this.limit - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      // Copy: the engine's socket buffer must not be pinned by a small slice we keep.
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
  }

  /**
   * Resolves when `<mark> <status>\n` has come through this stream (the launcher writes it once the
   * program has ended): with the stream's byte count before the mark (the program's output ends
   * there) and the status. Scans every byte, kept or not, in O(bytes).
   */
  watchEnd(mark: string): Promise<EndMark> {
    const scanner = new EndMarkScanner(Buffer.from(`${mark} `));
    this.endMark = scanner;
    return scanner.found;
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

/** Where a stream's end mark was found: `at` bytes of the program's output came before it. */
export interface EndMark {
  at: number;
  status: number;
}

// `<mark> <status>\n`: the status is a shell's $? (0-255), three digits at most.
const MAX_STATUS_DIGITS = 3;

/** Finds `<mark><status>\n` in a stream, across chunk boundaries, keeping only a mark's length of it. */
class EndMarkScanner {
  private readonly end = Promise.withResolvers<EndMark>();
  readonly found = this.end.promise;
  private done = false;
  // The stream's last bytes not yet known to hold no mark, and where they began in the stream.
  private tail = Buffer.alloc(0);
  private tailAt = 0;

  constructor(private readonly mark: Buffer) {}

  scan(chunk: Buffer, chunkAt: number): void {
    if (this.done) return;
    const buf = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    const bufAt = this.tail.length > 0 ? this.tailAt : chunkAt;
    const i = buf.indexOf(this.mark);
    if (i >= 0) {
      const digitsAt = i + this.mark.length;
      const newline = buf.indexOf(0x0a, digitsAt);
      if (newline >= 0) {
        this.done = true;
        this.tail = Buffer.alloc(0);
        this.end.resolve({ at: bufAt + i, status: Number(buf.subarray(digitsAt, newline).toString('latin1')) });
        return;
      }
      if (buf.length - digitsAt <= MAX_STATUS_DIGITS) {
        this.keep(buf, bufAt, i);
        return;
      }
    }
    // A mark cut by the chunk's end starts in its last mark.length - 1 bytes.
    this.keep(buf, bufAt, Math.max(0, buf.length - (this.mark.length - 1)));
  }

  private keep(buf: Buffer, bufAt: number, from: number): void {
    this.tail = Buffer.from(buf.subarray(from));
    this.tailAt = bufAt + from;
  }
}

/**
 * Decodes captured output for JSON: invalid UTF-8 (including a character cut at the limit)
 * becomes U+FFFD, so the reply is always valid JSON; NUL stays escaped by JSON itself.
 */
export function decodeOutput(bytes: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
}
