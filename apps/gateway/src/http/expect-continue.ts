import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Readable = IncomingMessage & { _read(size: number): void };

/**
 * `Expect: 100-continue` is a client asking whether to send its body at all (curl asks for any
 * body over 1 MiB). Node answers `100 Continue` before any handler has run, so a request then
 * refused before its body is read (no key, an unknown route, a Content-Length over the limit)
 * was uploaded for nothing. Here the 100 goes out when something first reads the body (our JSON
 * reader, Fastify's, a stream pipe): a refusal is answered instead, the client never sends the
 * body, and Node closes that connection (a 100 was asked for and not sent).
 *
 * The hook is the request's `_read`, which a Readable calls once, when a consumer first asks for
 * data, whoever that consumer is. Node's own drain of an unread body after the answer calls it
 * too: no 100 is sent once the answer's head has gone.
 */
export function continueWhenBodyIsRead(server: Server): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const stream = req as Readable;
    const read = stream._read.bind(stream);
    // A const first: V8 pretenures a closure assigned to a property (eslint.config.js).
    const readAfterContinue = (size: number) => {
      stream._read = read;
      if (!res.headersSent && !res.writableEnded) res.writeContinue();
      read(size);
    };
    stream._read = readAfterContinue;
    // With a checkContinue listener Node no longer emits 'request' for these: handed on as any request.
    server.emit('request', req, res);
  });
}
