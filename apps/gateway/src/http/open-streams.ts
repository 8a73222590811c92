import type { ServerResponse } from 'node:http';
import type { ApiError } from '../errors/api-error.js';

/**
 * The streamed answers in progress (their head has left), each with how it ends itself with an
 * error in its own protocol (a chat `data: {"error":…}` event, a Responses `response.failed`).
 * A SIGTERM lets streams finish within SHUTDOWN_GRACE_MS; one still open when the grace runs out
 * is ended with that error, so its client reads why it stopped (and may retry elsewhere) instead
 * of a connection cut in the middle of an event (main.ts).
 *
 * A resumable stream (a run's events: its client reconnects with Last-Event-ID and misses
 * nothing) is not waited for: it may last as long as its run, hours, and would hold the shutdown
 * for the whole grace only to be cut then. It is ended as soon as the gateway stops taking
 * requests (bootstrap.ts), so its client resumes on another replica at once.
 */
const open = new Map<ServerResponse, { endWith: (error: ApiError) => void; resumable: boolean }>();

/** Registers a stream until its response closes; `endWith` writes the error event and ends it. */
export function holdOpenStream(res: ServerResponse, endWith: (error: ApiError) => void, options: { resumable?: boolean } = {}): void {
  open.set(res, { endWith, resumable: options.resumable === true });
  res.once('close', () => open.delete(res));
}

/** Ends every resumable stream still open with `error` (the gateway is closing); how many there were. */
export function endResumableStreams(error: ApiError): number {
  return endStreams(error, (stream) => stream.resumable);
}

/** Ends every stream still open with `error`; how many there were. */
export function endOpenStreams(error: ApiError): number {
  return endStreams(error, () => true);
}

function endStreams(error: ApiError, which: (stream: { resumable: boolean }) => boolean): number {
  const streams = [...open].filter(([, stream]) => which(stream));
  for (const [res] of streams) open.delete(res);
  for (const [res, { endWith }] of streams) {
    try {
      endWith(error);
    } catch {
      res.destroy();
    }
  }
  return streams.length;
}
