import type { ServerResponse } from 'node:http';
import type { ApiError } from '../errors/api-error.js';

/**
 * The streamed answers in progress (their head has left), each with how it ends itself with an
 * error in its own protocol (a chat `data: {"error":…}` event, a Responses `response.failed`).
 * A SIGTERM lets streams finish within SHUTDOWN_GRACE_MS; one still open when the grace runs out
 * is ended with that error, so its client reads why it stopped (and may retry elsewhere) instead
 * of a connection cut in the middle of an event (main.ts).
 */
const open = new Map<ServerResponse, (error: ApiError) => void>();

/** Registers a stream until its response closes; `endWith` writes the error event and ends it. */
export function holdOpenStream(res: ServerResponse, endWith: (error: ApiError) => void): void {
  open.set(res, endWith);
  res.once('close', () => open.delete(res));
}

/** Ends every stream still open with `error`; how many there were. */
export function endOpenStreams(error: ApiError): number {
  const streams = [...open];
  open.clear();
  for (const [res, endWith] of streams) {
    try {
      endWith(error);
    } catch {
      res.destroy();
    }
  }
  return streams.length;
}
