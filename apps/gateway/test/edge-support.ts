import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { checkGatewayAnswer, type GatewayProcess } from '@drael/test-support';

/** One route as the gateway logged it at boot (`routes` line): method, Fastify URL, access. */
export interface LoggedRoute {
  method: string;
  url: string;
  access: 'public' | 'key' | 'admin';
}

/**
 * The route table the gateway logs at boot: every route Fastify registered, with its access. The
 * line is written before the port opens, but the log is asynchronous: it may reach the pipe a
 * moment after the gateway answers, so it is waited for (a few seconds at most).
 */
export async function routesOf(gateway: GatewayProcess): Promise<LoggedRoute[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    for (const line of gateway.output().split('\n')) {
      if (!line.includes('"msg":"routes"')) continue;
      const { routes } = JSON.parse(line) as { routes: string[] };
      return routes.map((r) => {
        const [method, url, access] = r.split(' ') as [string, string, LoggedRoute['access']];
        return { method, url, access };
      });
    }
    if (Date.now() > deadline) throw new Error(`the gateway logged no route table:\n${gateway.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A concrete path for a route: ids and the wildcard filled in. */
export function concretePath(url: string, id = 'x1'): string {
  return url.replace(/:[A-Za-z_]+/g, id).replace(/\*$/, 'f.txt');
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/**
 * An HTTP request with the path sent exactly as given (fetch's URL parser would fold `/./`,
 * `%2e` and the like before the gateway saw them).
 */
export function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') };
        // Judged against the gateway's /openapi.json like every fetch of the tests (openapi-check.setup.ts).
        checkGatewayAnswer(
          new URL(base).origin,
          method,
          path,
          answer.status,
          res.headers['content-type'] ?? null,
          /\bjson\b/i.test(res.headers['content-type'] ?? '') ? answer.body : undefined,
        ).then(() => resolve(answer), reject);
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The OpenAI error envelope, exactly: `{"error":{"message","type","param","code"}}`. */
export function isEnvelope(body: string): boolean {
  try {
    const v = JSON.parse(body) as { error?: Record<string, unknown> };
    const e = v.error;
    return (
      !!e && typeof e.message === 'string' && typeof e.type === 'string' && (e.param === null || typeof e.param === 'string') && (e.code === null || typeof e.code === 'string')
    );
  } catch {
    return false;
  }
}

/**
 * A raw socket: writes `head` (and `body` if any), then collects whatever comes back until the
 * server closes or `whenSeen` matches what arrived. Tells how many body bytes were written.
 */
export function rawExchange(
  base: string,
  head: string,
  body: Buffer | undefined,
  whenSeen: (text: string) => boolean = () => false,
): Promise<{ text: string; closed: boolean; socket: Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      resolve({ text, closed, socket });
    };
    socket.on('connect', () => {
      socket.write(head);
      if (body) socket.write(body);
    });
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (whenSeen(text)) done(false);
    });
    socket.on('close', () => done(true));
    socket.on('error', (err) => (settled ? undefined : text ? done(true) : reject(err)));
  });
}

/**
 * As most HTTP clients do (OpenAI's SDKs among them): writes the whole request, head and a body of
 * `size` bytes, and reads the answer only once every byte is written. Tells whether the write
 * failed (a reset from the server) and what came back once the server closed.
 */
export function wholeUploadThenRead(
  base: string,
  path: string,
  headers: Record<string, string>,
  size: number,
  framing: 'content-length' | 'chunked' = 'content-length',
): Promise<{ writeError?: string; text: string }> {
  const { hostname, port } = new URL(base);
  const length = framing === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${size}`;
  const head = `POST ${path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n${length}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let text = '';
    let writeError: string | undefined;
    // Read only after the last byte is written: until then the answer waits in the kernel.
    socket.pause();
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (writeError ??= err.code ?? err.message));
    socket.on('close', () => resolve({ writeError, text }));
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const framed = (piece: Buffer) => (framing === 'chunked' ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!socket.write(framed(chunk.subarray(0, n)))) return void socket.once('drain', pump);
      }
      if (framing === 'chunked') socket.write('0\r\n\r\n');
      socket.end(() => socket.resume());
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/**
 * Whether a process still holds the server's end of the IPv4 connection between these ports, read
 * from the kernel's table (/proc/net/tcp): once the server closes its socket, the entry is gone or
 * orphaned (inode 0) whatever the client does, so this tells the server's close from the client's
 * view of it (a half-open client sees nothing until it writes).
 */
export function serverHoldsConnection(serverPort: number, clientPort: number): boolean {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .some((f) => f.length > 9 && Number.parseInt(f[1]!.split(':')[1]!, 16) === serverPort && Number.parseInt(f[2]!.split(':')[1]!, 16) === clientPort && f[9] !== '0');
}

/** Status and JSON body of a raw HTTP/1.1 answer. */
export function parseRawAnswer(text: string): { status: number; head: string; body: string } {
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, head: head.toLowerCase(), body: end === -1 ? '' : text.slice(end + 4) };
}

/** True once `text` holds a whole answer with a content-length body. */
export function hasWholeAnswer(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? NaN);
  return Number.isFinite(length) && Buffer.byteLength(text.slice(end + 4), 'latin1') >= length;
}

/** The six rate-limit headers every keyed answer carries (OpenAI's names and the short ones). */
export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
] as const;
