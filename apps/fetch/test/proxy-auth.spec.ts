import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, article, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// The browser's filtering proxy is for the browser alone: loopback only, and a per-process
// random credential on every request, so no other local process can use it as a relay.
let site: FixtureServer;
let runtime: FetchRuntime;
let port: number;
let good: string;
// Resolves when the fixture's trickling answer to that path has lost its reader.
const trickleClosed = new Map<string, () => void>();

beforeAll(async () => {
  site = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    if (!req.url?.startsWith('/trickle')) return html(res, article(`Proxied ${req.url}`, 3));
    // A body that goes on for as long as its reader stays: a byte a second.
    res.writeHead(200, { 'content-type': 'text/html' }).write('<p>');
    const tick = setInterval(() => res.write('.'), 1_000);
    res.once('close', () => {
      clearInterval(tick);
      trickleClosed.get(req.url!)?.();
    });
  });
  runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false });
  await runtime.browser!.warm();
  port = runtime.proxy!.port!;
  const { username, password } = runtime.proxy!.credentials;
  good = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
});

afterAll(async () => {
  await runtime?.close();
  await site?.close();
});

/** A plain-http request through the proxy (absolute-form target). */
function viaProxy(path: string, authorization?: string): Promise<{ status: number; authenticate?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: site.url(path), headers: authorization ? { 'proxy-authorization': authorization } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, authenticate: res.headers['proxy-authenticate'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Raw request head to the proxy (CONNECT, upgrade); resolves with the first response line. */
function rawHead(head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      got += c;
      if (got.includes('\r\n')) {
        resolve(got.split('\r\n')[0]!);
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
  });
}

describe('filtering proxy credential', () => {
  const wrong = [
    ['no credential', undefined],
    ['a wrong password', `Basic ${Buffer.from('drael-x:guess').toString('base64')}`],
    ['a malformed header', 'Bearer abc'],
  ] as const;

  it.each(wrong)('plain http with %s → 407, nothing forwarded', async (_name, authorization) => {
    const before = site.hits.length;
    const res = await viaProxy('/refused-plain', authorization);
    expect(res.status).toBe(407);
    expect(res.authenticate).toMatch(/^Basic /);
    expect(site.hits.length).toBe(before);
  });

  it.each(wrong)('CONNECT with %s → 407', async (_name, authorization) => {
    const auth = authorization ? `proxy-authorization: ${authorization}\r\n` : '';
    const line = await rawHead(`CONNECT ${FIXTURE_HOST}:${site.port} HTTP/1.1\r\nhost: ${FIXTURE_HOST}:${site.port}\r\n${auth}\r\n`);
    expect(line).toMatch(/^HTTP\/1\.1 407/);
  });

  it('a WebSocket upgrade without the credential → 407, nothing forwarded', async () => {
    const before = site.upgrades.length;
    const line = await rawHead(
      `GET ${site.url('/ws')} HTTP/1.1\r\nhost: ${FIXTURE_HOST}:${site.port}\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    expect(line).toMatch(/^HTTP\/1\.1 407/);
    expect(site.upgrades.length).toBe(before);
  });

  it('the right credential is served (plain and CONNECT)', async () => {
    const res = await viaProxy('/allowed', good);
    expect(res.status).toBe(200);
    expect(res.body).toContain('Proxied /allowed');
    const line = await rawHead(`CONNECT ${FIXTURE_HOST}:${site.port} HTTP/1.1\r\nhost: ${FIXTURE_HOST}:${site.port}\r\nproxy-authorization: ${good}\r\n\r\n`);
    expect(line).toMatch(/^HTTP\/1\.1 200/);
  });

  it("the upstream of a plain-http request goes when the browser's side does (each page-aborted request kept its upstream open for as long as the server trickled)", async () => {
    const path = '/trickle-aborted';
    const closed = new Promise<void>((resolve) => trickleClosed.set(path, resolve));
    const first = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${site.url(path)} HTTP/1.1\r\nhost: ${FIXTURE_HOST}:${site.port}\r\nproxy-authorization: ${good}\r\n\r\n`));
      socket.setEncoding('utf8');
      // The answer has begun: the browser's side lets go.
      socket.once('data', (c: string) => {
        socket.destroy();
        resolve(c.split('\r\n')[0]!);
      });
      socket.on('error', reject);
    });
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    // The server sees its reader go (without the fix: never, and the test times out).
    await closed;
  });

  it('each process gets its own random credential', () => {
    const other = makeRuntime({ allow: FIXTURE_ALLOW, cache: false });
    try {
      expect(other.proxy!.credentials.password).not.toBe(runtime.proxy!.credentials.password);
      expect(runtime.proxy!.credentials.password.length).toBeGreaterThanOrEqual(32);
    } finally {
      void other.close();
    }
  });

  it('the browser itself still gets through (it answers the 407 with the credential)', async () => {
    const page = await runtime.pages.fetch({ url: site.url('/through-browser'), render: 'browser' });
    expect(page.content).toContain('Proxied /through-browser');
  });

  it('listens on loopback only', async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal);
    if (!external) return; // a machine with no other interface has nothing else to listen on
    const reached = await new Promise<boolean>((resolve) => {
      const s = connect(port, external.address, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    expect(reached).toBe(false);
  });
});
