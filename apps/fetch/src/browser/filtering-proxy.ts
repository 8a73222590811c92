import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FetchError } from '../fetch-error.js';
import type { GuardedDialer } from '../guard/guarded-dialer.js';

export const BLOCKED_HEADER = 'x-drael-blocked';

export interface BlockedConnection {
  authority: string;
  range: string;
  at: number;
}

export interface ProxyCredentials {
  username: string;
  password: string;
}

const PROXY_AUTH_REQUIRED = 'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="drael-fetch"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n';

const HOP_BY_HOP = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

/**
 * The browser's only way out: an HTTP proxy on loopback that opens every upstream connection
 * through the same GuardedDialer as the HTTP path (resolve, vet, connect to the vetted address).
 * CONNECT carries https and WebSockets; absolute-form requests carry plain http. Intercepting
 * requests inside the browser would miss what the page's own network stack does (redirects,
 * subresources, WebSockets, service workers); a proxy sees all of it.
 *
 * Only the browser may use it: it listens on loopback only, and every request (plain, CONNECT,
 * upgrade) must carry this process's random credential, given to Chromium per context; anything
 * else gets 407, so no other local process can use the proxy as a relay into the web.
 */
export class FilteringProxy {
  private server: Server | undefined;
  private listeningPort: number | undefined;
  private readonly sockets = new Set<Duplex>();
  private readonly blocked: BlockedConnection[] = [];
  readonly credentials: ProxyCredentials;
  private readonly expectedAuthorization: Buffer;

  constructor(
    private readonly dialer: GuardedDialer,
    credentials: ProxyCredentials = { username: `drael-${randomBytes(6).toString('hex')}`, password: randomBytes(24).toString('base64url') },
  ) {
    this.credentials = credentials;
    this.expectedAuthorization = Buffer.from(`Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`);
  }

  /** The listening port, once started. */
  get port(): number | undefined {
    return this.listeningPort;
  }

  async start(): Promise<number> {
    const server = createServer((req, res) => void this.forward(req, res));
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => void this.tunnel(req, client, head));
    server.on('upgrade', (req: IncomingMessage, client: Duplex, head: Buffer) => void this.upgrade(req, client, head));
    server.on('connection', (s: Socket) => this.track(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.listeningPort = (server.address() as AddressInfo).port;
    return this.listeningPort;
  }

  /** The connections refused since `since` (epoch ms), newest last. */
  blockedSince(since: number): BlockedConnection[] {
    return this.blocked.filter((b) => b.at >= since);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private authorised(req: IncomingMessage): boolean {
    const given = Buffer.from(req.headers['proxy-authorization'] ?? '');
    return given.length === this.expectedAuthorization.length && timingSafeEqual(given, this.expectedAuthorization);
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.once('close', () => this.sockets.delete(s));
  }

  private noteBlocked(authority: string, err: FetchError): string {
    const range = typeof err.details?.range === 'string' ? err.details.range : err.code;
    this.blocked.push({ authority, range, at: Date.now() });
    if (this.blocked.length > 500) this.blocked.splice(0, this.blocked.length - 500);
    return range;
  }

  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.track(client);
    client.on('error', () => undefined);
    if (!this.authorised(req)) {
      client.end(PROXY_AUTH_REQUIRED);
      return;
    }
    const authority = req.url ?? '';
    const { host, port } = splitAuthority(authority, 443);
    try {
      const upstream = await this.dialer.dial({ host, port });
      this.track(upstream);
      // The browser let go while the connection was being made: its close has been and gone.
      if (client.destroyed) return void upstream.destroy();
      upstream.on('error', () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      client.once('close', () => upstream.destroy());
      upstream.resume();
    } catch (err) {
      client.end(this.refusal(authority, err));
    }
  }

  private async upgrade(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.track(client);
    client.on('error', () => undefined);
    if (!this.authorised(req)) {
      client.end(PROXY_AUTH_REQUIRED);
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const port = Number(url.port || 80);
    try {
      const upstream = await this.dialer.dial({ host: url.hostname, port, url: url.href });
      this.track(upstream);
      if (client.destroyed) return void upstream.destroy();
      upstream.on('error', () => client.destroy());
      client.once('close', () => upstream.destroy());
      const lines = [`${req.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        if (name.toLowerCase().startsWith('proxy-')) continue;
        lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
      }
      upstream.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      upstream.resume();
    } catch (err) {
      client.end(this.refusal(url.host, err));
    }
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorised(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="drael-fetch"', 'content-type': 'text/plain', connection: 'close' }).end('proxy authentication required');
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      res.writeHead(400).end('absolute http URL expected');
      return;
    }
    const port = Number(url.port || 80);
    let socket: Socket;
    try {
      socket = await this.dialer.dial({ host: url.hostname, port, url: url.href });
    } catch (err) {
      const blocked = err instanceof FetchError && err.code === 'blocked_address';
      const range = blocked ? this.noteBlocked(url.host, err) : undefined;
      res.writeHead(blocked ? 403 : 502, {
        'content-type': 'text/plain',
        ...(range ? { [BLOCKED_HEADER]: range } : {}),
        'x-drael-error': err instanceof FetchError ? err.code : 'connection_failed',
      });
      res.end(err instanceof Error ? err.message : 'refused');
      return;
    }
    this.track(socket);
    // The browser's side gone (the page aborted the request, or its context closed): the upstream
    // goes with it. Without this, 150 requests a page started and aborted left 81 upstream
    // connections open after the render, for as long as their server kept trickling.
    if (res.destroyed || req.destroyed) return void socket.destroy();
    res.once('close', () => socket.destroy());
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    const upstreamReq = httpRequest({
      createConnection: () => socket,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, connection: 'close' },
    });
    // A socket from the SOCKS dialer arrives paused (nothing may be lost after the handshake).
    upstreamReq.once('socket', (s) => s.resume());
    upstreamReq.on('response', (up) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      up.pipe(res);
    });
    upstreamReq.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstreamReq);
  }

  private refusal(authority: string, err: unknown): string {
    if (err instanceof FetchError && err.code === 'blocked_address') {
      const range = this.noteBlocked(authority, err);
      return `HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: ${range}\r\ncontent-length: 0\r\n\r\n`;
    }
    return 'HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n';
  }
}

function splitAuthority(authority: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  if (!m) return { host: authority, port: defaultPort };
  return { host: m[1]!, port: m[2] ? Number(m[2]) : defaultPort };
}
