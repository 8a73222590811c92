import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, ProviderError } from './provider-http.client.js';

// What counts as an attempt the provider received (per-attempt prices charge it): a provider that
// has the request and does not answer in time has it; one that could not be reached does not.
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.url === '/silent') return; // has the request, never answers
    if (req.url === '/stalls') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
      return; // the status line came, the body never ends
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function failureOf(url: string): Promise<ProviderError> {
  try {
    await postJson(url, '', {}, { timeoutMs: 300 });
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error('expected a ProviderError');
}

describe('postJson', () => {
  it('answers the JSON of a provider that answers', async () => {
    expect(await postJson(`${base}/ok`, 'k', { q: 1 }, { timeoutMs: 1000 })).toEqual({ ok: true });
  });

  it('a provider that has the request and does not answer in time: provider_timeout, attempted', async () => {
    expect(await failureOf(`${base}/silent`)).toMatchObject({ code: 'provider_timeout', attempted: true });
  });

  it('a provider whose body stalls after its status line: provider_timeout, attempted', async () => {
    expect(await failureOf(`${base}/stalls`)).toMatchObject({ code: 'provider_timeout', attempted: true });
  });

  it('a provider that cannot be reached: provider_unreachable, not attempted', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await failureOf(`http://127.0.0.1:${port}/x`)).toMatchObject({ code: 'provider_unreachable', attempted: false });
  });
});
