import type { ServerResponse } from 'node:http';
import { trackOpenStream } from '../metrics/gateway.metrics.js';
import { drained } from '../http/drained.js';
import { holdOpenStream } from '../http/open-streams.js';
import type { ApiError } from '../errors/api-error.js';

export type ResponseEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/**
 * The one source of `sequence_number`: every event of a response goes through `emit`, so the
 * numbers are monotonic whatever writes them (spec 02). A non-streamed response emits into nothing.
 */
export class ResponseEvents {
  private sequence = 0;
  /** Settles once the client's socket, full at the last emit, has drained (or closed). */
  private full: Promise<void> | undefined;

  constructor(private readonly sink?: (event: ResponseEvent) => void | Promise<void>) {}

  /** False for a non-streamed response: callers skip building event payloads nobody reads. */
  get live(): boolean {
    return this.sink !== undefined;
  }

  emit(type: string, fields: Record<string, unknown>): void {
    if (!this.sink) return;
    const full = this.sink({ type, sequence_number: this.sequence++, ...fields });
    if (full) this.full = full;
  }

  /**
   * A promise while the client's socket is full, for the loop to await before it reads more of the
   * upstream: the events of what it read are already queued, and nothing more is until the client
   * reads. Not awaited, a client that never read had everything queued in memory, some 4 times the
   * upstream's bytes (up to ~1.5 GiB a request, audit).
   */
  drained(): void | Promise<void> {
    const full = this.full;
    this.full = undefined;
    return full;
  }
}

/**
 * Writes events as SSE (`event:` + `data:` lines). Headers leave only at `open()`, so that a
 * failure before the first upstream answer can still be an HTTP status with the error envelope.
 */
export class SseWriter {
  private pending: ResponseEvent[] = [];
  private opened = false;
  private draining: Promise<void> | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    /** Ends the stream with `response.failed` carrying the error (the gateway shutting down mid-stream). */
    private readonly failWith: (error: ApiError) => void,
  ) {}

  get isOpen(): boolean {
    return this.opened;
  }

  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-request-id': this.requestId,
    });
    trackOpenStream(this.res, 'responses');
    holdOpenStream(this.res, this.failWith);
    const queued = this.pending;
    this.pending = [];
    for (const e of queued) void this.write(e);
  }

  /** Written at once (queued before `open()`); a promise only while the client's socket is full, one for every write until it drains. */
  write(event: ResponseEvent): void | Promise<void> {
    if (!this.opened) {
      this.pending.push(event);
      return;
    }
    if (this.res.destroyed || this.res.writableEnded) return;
    // A socket that closed while we wrote never drains: its close ends the wait instead.
    if (!this.res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`) && !this.res.destroyed && !this.res.closed) {
      this.draining ??= drained(this.res).then(() => {
        this.draining = undefined;
      });
    }
    return this.draining;
  }

  end(): void {
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }
}
