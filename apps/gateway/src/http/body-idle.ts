import type { IncomingMessage, ServerResponse } from 'node:http';
import { transportError, writeErrorResponse } from '../errors/error-response.js';
import { requestIdOf } from './request-id.js';

/**
 * Closes a request whose body stops arriving for `idleMs` (408 in the envelope when no answer
 * has started), whoever is reading it, or not reading it: Node's own requestTimeout bounds only
 * the whole request, which a large upload needs to be long. The socket's inactivity timer is
 * the clock; it is handed back to Node once the body has ended (keep-alive timing is Node's).
 */
export function watchBodyIdle(req: IncomingMessage, res: ServerResponse, idleMs: number, serverTimeout: number): void {
  const socket = req.socket;
  socket.setTimeout(idleMs);
  // Node emits the socket's timeout on the request only while it is incomplete.
  const onTimeout = () => {
    if (!res.headersSent) {
      const error = transportError(408, 'request_timeout', `The request body stalled for ${idleMs} ms.`);
      writeErrorResponse(res, error, requestIdOf(req), { connection: 'close' });
    }
    const net = socket as typeof socket & { destroySoon?: () => void };
    if (net.destroySoon) net.destroySoon();
    else socket.destroy();
  };
  // A body that arrived whole but that no one reads (a route that ignores it) has not stalled:
  // the timer goes back to Node's setting instead of closing the connection.
  const onCompleteTimeout = () => {
    if (req.complete) socket.setTimeout(serverTimeout);
  };
  req.once('timeout', onTimeout);
  res.once('timeout', onCompleteTimeout);
  req.once('end', () => {
    req.removeListener('timeout', onTimeout);
    res.removeListener('timeout', onCompleteTimeout);
    // After the answer, Node has set the keep-alive timer itself: leave it.
    if (!res.writableFinished) socket.setTimeout(serverTimeout);
  });
}
