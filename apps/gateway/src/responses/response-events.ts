import type { ServerResponse } from 'node:http';
import { trackOpenStream } from '../metrics/gateway.metrics.js';
import { holdOpenStream } from '../http/open-streams.js';
import type { ApiError } from '../errors/api-error.js';

export type ResponseEvent = { type: string; sequence_number: number } & Record<string, unknown>;

/**
 * The one source of `sequence_number`: every event of a response goes through `emit`, so the
 * numbers are monotonic whatever writes them (spec 02). A non-streamed response emits into nothing.
 */
export class ResponseEvents {
  private sequence = 0;

  constructor(private readonly sink?: (event: ResponseEvent) => void) {}

  /** False for a non-streamed response: callers skip building event payloads nobody reads. */
  get live(): boolean {
    return this.sink !== undefined;
  }

  emit(type: string, fields: Record<string, unknown>): void {
    if (!this.sink) return;
    this.sink({ type, sequence_number: this.sequence++, ...fields });
  }
}

/**
 * Writes events as SSE (`event:` + `data:` lines). Headers leave only at `open()`, so that a
 * failure before the first upstream answer can still be an HTTP status with the error envelope.
 */
export class SseWriter {
  private pending: ResponseEvent[] = [];
  private opened = false;

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
    for (const e of queued) this.write(e);
  }

  write(event: ResponseEvent): void {
    if (!this.opened) {
      this.pending.push(event);
      return;
    }
    if (this.res.destroyed || this.res.writableEnded) return;
    this.res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  end(): void {
    if (!this.res.destroyed && !this.res.writableEnded) this.res.end();
  }
}
