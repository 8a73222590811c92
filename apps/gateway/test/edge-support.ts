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
