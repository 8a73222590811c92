import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { transportError, writeErrorResponse } from '../errors/error-response.js';
import { requestIdOf } from './request-id.js';

/**
 * Closes connections that go quiet for `idleMs` while a request body is still arriving (408 in
 * the envelope when no answer has started), whoever is reading that body or not: Node's own
 * requestTimeout bounds only the whole request, which a large upload needs to be long.
 *
 * The clock is Node's socket inactivity timer (server.timeout), refreshed by Node on every read
 * and write, so a request costs nothing extra. A quiet connection with no request in flight (idle
 * keep-alive) is closed, as Node would; one whose request is complete and whose answer is merely
 * slow to write (a tool running before the next stream event) is left alone.
 */
export function closeStalledBodies(server: Server, idleMs: number): void {
  server.timeout = idleMs;
  server.on('timeout', (socket: Socket) => {
    const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!res) return void socket.destroy();
    if (res.req.complete) return;
    if (!res.headersSent) {
      const error = transportError(408, 'request_timeout', `The request body stalled for ${idleMs} ms.`);
      writeErrorResponse(res, error, requestIdOf(res.req), { connection: 'close' });
    }
    socket.destroySoon();
  });
}
