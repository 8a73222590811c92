import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

// How long a connection opened ahead of need is held unused before it is closed: it occupies a
// handler on SearXNG (a thread in Debian's searx) the whole time. Searches more often than this
// always find one; after a quiet spell the next search connects as before.
const WARM_IDLE_MS = 5_000;

/**
 * A keep-alive agent that can hold one connection to SearXNG opened ahead of need, for servers
 * that close every connection after one answer (Debian's searx speaks HTTP/1.0): the TCP
 * handshake and the server's accept then happen while the service waits for its next search, not
 * on that search's path. SearxClient calls `prepare()` after an answer on a connection the server
 * closes; the agent's next new connection is the held one. Trade-offs: apps/search/README.md,
 * "Connections to SearXNG".
 */
export class WarmAgent extends http.Agent {
  private held?: { socket: Socket; drop: () => void; timer: NodeJS.Timeout };
  private lastOptions?: http.ClientRequestArgs;
  private readonly warm = new WeakSet<Duplex>();
  private closed = false;

  constructor(private readonly idleMs = WARM_IDLE_MS) {
    super({ keepAlive: true });
  }

  /** Whether `socket` was opened ahead of need (a request failing on it before any answer may be retried). */
  openedAhead(socket: Duplex): boolean {
    return this.warm.has(socket);
  }

  /** Open one connection for the next request, unless one is held (or none was ever asked for). */
  prepare(): void {
    if (this.held || this.closed || !this.lastOptions) return;
    const socket = super.createConnection(this.lastOptions) as Socket;
    // Unused, it must not keep the process alive; it is ref'd again when a request takes it.
    socket.unref();
    const drop = () => {
      if (this.held?.socket === socket) this.release();
      socket.destroy();
    };
    // Closed or refused by the server, or anything it sends unasked (a 408, say): never handed out.
    socket.on('error', drop);
    socket.on('end', drop);
    socket.on('close', drop);
    socket.on('data', drop);
    const timer = setTimeout(drop, this.idleMs);
    timer.unref();
    this.held = { socket, drop, timer };
    this.warm.add(socket);
  }

  /** The agent asks for a new connection: the held one if it is still usable, else a fresh one. */
  override createConnection(options: http.ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    this.lastOptions = options;
    const held = this.release();
    if (held && !held.destroyed && !held.readableEnded) {
      held.ref();
      return held;
    }
    return super.createConnection(options, callback);
  }

  override destroy(): void {
    this.closed = true;
    this.release()?.destroy();
    super.destroy();
  }

  /** Stops watching the held connection and hands it back (the caller uses or destroys it). */
  private release(): Socket | undefined {
    const held = this.held;
    if (!held) return undefined;
    this.held = undefined;
    clearTimeout(held.timer);
    for (const event of ['error', 'end', 'close', 'data'] as const) held.socket.removeListener(event, held.drop);
    return held.socket;
  }
}
