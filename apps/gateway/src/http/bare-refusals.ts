import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { transportError, writeErrorResponse, writeRawErrorAndClose } from '../errors/error-response.js';
import { lingerIfBodyUnread } from './lingering-close.js';
import { requestIdOf } from './request-id.js';

/**
 * Requests Node's HTTP server would refuse itself, with an empty body (a 400 for HTTP/1.1 without
 * Host, a 417 for an Expect it does not know) or with no answer at all (CONNECT: the socket is
 * dropped), are answered here in the envelope, as every other refusal is. The server is created
 * with `requireHostHeader: false`; the request listener asks `refuseMissingHost` first.
 */
export function answerBareRefusals(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const error = transportError(417, 'expectation_failed', 'Only "Expect: 100-continue" is supported.');
    writeErrorResponse(res, error, requestIdOf(req), lingerIfBodyUnread(req) ? { connection: 'close' } : undefined);
  });
  // A tunnel is nothing Drael serves: answered, then closed (the socket is the client's raw stream).
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    writeRawErrorAndClose(transportError(400, 'invalid_request', 'CONNECT is not served: Drael is not a proxy.'), socket);
  });
}

/**
 * HTTP/1.1 requires Host (RFC 9112 §3.2): without it, 400 in the envelope. When answered, the
 * answer's request id (for its access line); undefined when the request goes on.
 */
export function refuseMissingHost(req: IncomingMessage, res: ServerResponse): string | undefined {
  if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return undefined;
  const error = transportError(400, 'invalid_request', 'An HTTP/1.1 request needs a Host header.');
  // Closed after the answer, as Node's own refusal does (lingering if a body is on its way).
  lingerIfBodyUnread(req);
  const requestId = requestIdOf(req);
  writeErrorResponse(res, error, requestId, { connection: 'close' });
  return requestId;
}
