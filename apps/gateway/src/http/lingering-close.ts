import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { hasBody } from './request-input.js';

// nginx's lingering_time: how long a client may go on sending before the socket is destroyed. A
// client that goes quiet is let go by the server's idle timer (HTTP_BODY_IDLE_TIMEOUT_MS,
// stalled-connections.ts), as any quiet connection is.
const LINGER_TOTAL_MS = 30_000;
// What is read and dropped at most: twice the default body limit.
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
// How often the linger looks at what was read: soon at first, then less often. A fast sender on a
// fast link (loopback, 10 Gb/s) sends 64 MiB in tens of milliseconds: checked only every 250 ms,
// it could send hundreds of MiB between two looks. Doubling from 10 ms, a look comes before the
// sender has sent twice what it had at the last one, so what is read stays near the bound.
const LINGER_FIRST_CHECK_MS = 10;
const LINGER_CHECK_MS = 250;

const lingering = new WeakSet<Socket>();

/**
 * A request refused before its body was read (no key, too large, unknown route) is answered and
 * its connection closed rather than drained for a next request. Closing a socket that still has
 * unread bytes makes the kernel send a reset, and a client still sending its body (most send the
 * whole body before they read) then loses the answer: it sees EPIPE or ECONNRESET instead of the
 * 401 or 413, and OpenAI's SDKs retry a connection error. So the close lingers, as nginx's
 * `lingering_close` does: the answer and a FIN go out, what the client still sends is read and
 * dropped, and the socket goes when the client closes its side, goes quiet (the server's idle
 * timer), has sent for 30 s or has sent 64 MiB.
 *
 * Returns whether the body is unread: the caller then marks its answer `connection: close`, and
 * Node's close of that connection (socket.destroySoon, once the answer is written) lingers.
 */
export function lingerIfBodyUnread(req: IncomingMessage): boolean {
  if (!hasBody(req.headers) || req.complete) return false;
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (!lingering.has(socket)) {
    lingering.add(socket);
    // A const first: V8 pretenures a closure assigned to a property (eslint.config.js).
    const lingerOnClose = () => linger(socket);
    socket.destroySoon = lingerOnClose;
  }
  return true;
}

function linger(socket: Socket): void {
  if (socket.destroyed) return;
  // Queued after the answer: the client reads the answer, then the end of the stream. Once the
  // client ends its side too, the socket closes with nothing unread (autoDestroy): no reset.
  socket.end();
  // Node's HTTP parser reads the socket itself (no 'data' events), so progress is read off bytesRead.
  const startedAt = Date.now();
  const startBytes = socket.bytesRead;
  let check: NodeJS.Timeout | undefined;
  const look = (wait: number) => {
    check = setTimeout(() => {
      if (Date.now() - startedAt >= LINGER_TOTAL_MS || socket.bytesRead - startBytes > LINGER_MAX_BYTES) socket.destroy();
      else look(Math.min(wait * 2, LINGER_CHECK_MS));
    }, wait);
    check.unref();
  };
  look(LINGER_FIRST_CHECK_MS);
  socket.once('close', () => clearTimeout(check));
  // What arrives goes through Node's HTTP parser, which drops the body of a request answered
  // unread; nothing here touches the socket's reading (a 'data' listener or a resume() on a socket
  // the parser reads would stall it).
}
