import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { transportError, writeErrorResponse } from '../errors/error-response.js';
import { requestIdOf } from './request-id.js';

export interface StalledConnectionBounds {
  /** Longest silence while a request body is still arriving (and on a connection with no request). */
  readonly bodyIdleMs: number;
  /** Longest a client may take none of an answer's bytes waiting for it. */
  readonly sendIdleMs: number;
}

/** A socket's answer stalled since `since` (ms), with `queued` bytes waiting for the client then. */
interface Stall {
  since: number;
  queued: number;
}

/**
 * Closes connections that stop moving on the side that owes progress:
 * - a request body still arriving that goes quiet for `bodyIdleMs` (408 in the envelope when no
 *   answer has started), whoever is reading that body or not: Node's own requestTimeout bounds only
 *   the whole request, which a large upload needs to be long;
 * - an answer whose client takes none of its bytes for `sendIdleMs` (nginx's send_timeout): a
 *   client that stopped reading otherwise held its request, its upstream call and the queued
 *   answer for as long as it kept the connection open. Closing the socket ends the request as a
 *   client that left does (the loop's abort, the proxy's upstream call dropped).
 * A quiet connection with no request in flight (idle keep-alive) is closed, as Node would; one
 * whose request is complete and whose answer is merely slow to come (a tool running before the
 * next stream event, nothing waiting to be sent) is left alone.
 *
 * The clock is Node's socket inactivity timer (server.timeout = bodyIdleMs), refreshed by Node on
 * every read and every write that makes progress (a partly sent write counts as progress too), so
 * a request costs nothing extra; a stalled answer is looked at again each `bodyIdleMs` until it
 * moves or `sendIdleMs` has passed.
 */
export function closeStalledConnections(server: Server, bounds: StalledConnectionBounds): void {
  const { bodyIdleMs, sendIdleMs } = bounds;
  const stalls = new WeakMap<Socket, Stall>();
  server.timeout = bodyIdleMs;
  server.on('timeout', (socket: Socket) => {
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!res) return void socket.destroy();
    if (res.req.complete) {
      const queued = socket.writableLength;
      if (queued === 0) return void stalls.delete(socket);
      const now = Date.now();
      let stall = stalls.get(socket);
      // Timed out with its bytes still queued: nothing moved for bodyIdleMs. A different count than
      // at the last look means it moved in between (and stalled again): its clock starts over.
      if (stall?.queued !== queued) {
        stall = { since: now - bodyIdleMs, queued };
        stalls.set(socket, stall);
      }
      if (now - stall.since >= sendIdleMs) return void socket.destroy();
      // Node's timer fires once per quiet spell: armed again to look at this stall once more.
      socket.setTimeout(bodyIdleMs);
      return;
    }
    if (!res.headersSent) {
      const error = transportError(408, 'request_timeout', `The request body stalled for ${bodyIdleMs} ms.`);
      writeErrorResponse(res, error, requestIdOf(res.req), { connection: 'close' });
    }
    socket.destroySoon();
  });
}
