import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { FetchRuntime, type FetchRuntimeConfig, type FetchRuntimeOverrides } from '../../src/fetch.runtime.js';
import type { ResolvedAddress, Resolver } from '../../src/guard/resolver.js';

/** The one address tests about extraction and limits open in the guard; 127.0.0.1 stays blocked. */
export const FIXTURE_HOST = '127.0.0.2';
export const FIXTURE_ALLOW = '127.0.0.2/32';

export interface FixtureServer {
  port: number;
  origin: string;
  /** Request paths (with query) in arrival order. */
  hits: string[];
  /** Upgrade (WebSocket) attempts. */
  upgrades: string[];
  url(path: string): string;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, server: FixtureServer) => void;

/** A real HTTP server on a loopback address, recording every request it gets. */
export async function startFixtureServer(host: string, handler: Handler): Promise<FixtureServer> {
  const sockets = new Set<Socket>();
  const hits: string[] = [];
  const upgrades: string[] = [];
  const holder: { fixture?: FixtureServer } = {};
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res, holder.fixture!);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    upgrades.push(req.url ?? '');
    socket.destroy();
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const fixture: FixtureServer = {
    port,
    origin: `http://${hostPart}:${port}`,
    hits,
    upgrades,
    url: (path) => `http://${hostPart}:${port}${path}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  holder.fixture = fixture;
  return fixture;
}

export function html(res: ServerResponse, body: string, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(body);
}

export const article = (title: string, paragraphs: number, extra = '') =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/about">About</a></nav>` +
  `<article><h1>${title}</h1>${Array.from({ length: paragraphs }, (_, i) => `<p>Paragraph ${i + 1} of ${title}: the quick brown fox jumps over the lazy dog near the river bank while the sun sets.</p>`).join('')}</article>${extra}<footer>© footer</footer></body></html>`;

/** A resolver that answers from a script and records every name it was asked for. */
export class StubResolver implements Resolver {
  readonly asked: string[] = [];
  constructor(private readonly answer: (name: string, nth: number) => string[]) {}

  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    this.asked.push(hostname);
    const nth = this.asked.filter((h) => h === hostname).length;
    const addresses = this.answer(hostname, nth);
    if (addresses.length === 0) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }
}

export interface SocksRequest {
  atyp: number;
  host: string;
  port: number;
}

export interface SocksRecorder {
  port: number;
  url: string;
  requests: SocksRequest[];
  close(): Promise<void>;
}

/**
 * A local SOCKS5 server standing in for Tor: it records the ATYP and host each CONNECT asked
 * for, answers `replyFor(host)` (0 = granted; Tor's 0xF0.. codes for onion failures), and then
 * serves HTTP itself on the tunnel, as the onion service would.
 */
export async function startSocksRecorder(replyFor: (host: string) => number, page: (host: string, path: string) => string): Promise<SocksRecorder> {
  const requests: SocksRequest[] = [];
  const sockets = new Set<Socket>();
  const httpServer = createServer((req, res) => {
    html(res, page(String(req.headers.host), req.url ?? '/'));
  });
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let stage = 0;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (stage === 0) {
        if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
        buf = buf.subarray(2 + buf[1]!);
        socket.write(Buffer.from([0x05, 0x00]));
        stage = 1;
      }
      if (stage === 1) {
        if (buf.length < 5) return;
        const atyp = buf[3]!;
        let host: string;
        let end: number;
        if (atyp === 0x03) {
          end = 5 + buf[4]!;
          if (buf.length < end + 2) return;
          host = buf.subarray(5, end).toString('ascii');
        } else if (atyp === 0x01) {
          end = 8;
          if (buf.length < end + 2) return;
          host = Array.from(buf.subarray(4, 8)).join('.');
        } else {
          end = 20;
          if (buf.length < end + 2) return;
          host = buf.subarray(4, 20).toString('hex');
        }
        const port = buf.readUInt16BE(end);
        requests.push({ atyp, host, port });
        const rep = replyFor(host);
        socket.write(Buffer.from([0x05, rep, 0x00, 0x01, 0, 0, 0, 0, 0, 0]));
        socket.off('data', onData);
        if (rep !== 0) {
          socket.end();
          return;
        }
        stage = 2;
        const rest = buf.subarray(end + 2);
        if (rest.length) socket.unshift(rest);
        httpServer.emit('connection', socket);
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `socks5h://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RuntimeOptions extends FetchRuntimeOverrides {
  allow?: string;
  tor?: string;
  browser?: boolean;
  /** The most memory one renderer may hold while its page renders, MiB (default: the service's, 1024). */
  rendererMaxMb?: number;
  /** The browser's pages and queue, in all and per tenant (defaults: 2 pages, 16 waiting, shares derived). */
  browserSlots?: Partial<
    Pick<FetchRuntimeConfig, 'FETCH_BROWSER_CONCURRENCY' | 'FETCH_BROWSER_MAX_QUEUE' | 'FETCH_BROWSER_CONCURRENCY_PER_TENANT' | 'FETCH_BROWSER_MAX_QUEUE_PER_TENANT'>
  >;
  /** The extraction threads, their queue, shares and time (defaults: the service's, 2 threads, 32 waiting, 5 s). */
  extract?: Partial<
    Pick<
      FetchRuntimeConfig,
      'FETCH_EXTRACT_THREADS' | 'FETCH_EXTRACT_MAX_QUEUE' | 'FETCH_EXTRACT_THREADS_PER_TENANT' | 'FETCH_EXTRACT_MAX_QUEUE_PER_TENANT' | 'FETCH_EXTRACT_TIMEOUT_MS'
    >
  >;
}

export const silentLogger = { warn: () => undefined, info: () => undefined };

/** The fetch service's parts wired in-process, as the Nest module wires them. */
export function makeRuntime(options: RuntimeOptions = {}): FetchRuntime {
  return new FetchRuntime(
    {
      REDIS_URL: 'redis://127.0.0.1:6379',
      FETCH_CACHE_PREFIX: `test:fetch:${randomBytes(5).toString('hex')}:`,
      TOR_SOCKS_URL: options.tor ?? '',
      CHROMIUM_PATH: '/usr/lib/chromium/chromium',
      FETCH_BROWSER_CONCURRENCY: 2,
      FETCH_BROWSER_MAX_QUEUE: 16,
      FETCH_BROWSER_SPARE: 1,
      FETCH_RENDERER_MAX_MB: options.rendererMaxMb ?? 1024,
      ...options.browserSlots,
      FETCH_EXTRACT_THREADS: 2,
      FETCH_EXTRACT_MAX_QUEUE: 32,
      FETCH_EXTRACT_TIMEOUT_MS: 5_000,
      ...options.extract,
      FETCH_BROWSER: options.browser === false ? 'off' : 'on',
      FETCH_TEST_ALLOW_CIDRS: options.allow,
    },
    silentLogger,
    options,
  );
}

/** Awaits a promise that must fail with a typed error, and returns that error. */
export async function failure(p: Promise<unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a failure, got a result');
}
