import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSearch, type SearchUnderTest } from './support.js';

// A stand-in for a SearXNG that misbehaves (outside Drael, on a real socket): it answers /config
// and /search as `mode` says. Failures are never cached, so one service process serves every case.
let mode: 'hang' | 'forbidden' | 'html' = 'hang';
let fake: Server;
const sockets = new Set<Socket>();
let search: SearchUnderTest;

beforeAll(async () => {
  fake = createServer((req, res) => {
    if (mode === 'hang') return; // accepts the request and never answers
    if (mode === 'forbidden') {
      res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>403 Forbidden</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not the json format</html>');
  });
  fake.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  search = await startSearch({ SEARXNG_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, SEARXNG_TIMEOUT_MS: '500' });
});
afterAll(async () => {
  await search?.close();
  for (const s of sockets) s.destroy();
  await new Promise((r) => fake?.close(r));
});

describe('search.query.v1 when SearXNG misbehaves', () => {
  it('no answer within SEARXNG_TIMEOUT_MS → ok:false searx_unreachable, in about that time', async () => {
    mode = 'hang';
    const started = Date.now();
    const reply = await search.query({ query: 'drael hang' });
    expect(reply).toMatchObject({ ok: false, code: 'searx_unreachable', reason: expect.stringMatching(/no answer within 500 ms/) });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('HTTP 403 (the json format is off) → ok:false searx_unreachable saying so', async () => {
    mode = 'forbidden';
    const reply = await search.query({ query: 'drael forbidden' });
    expect(reply).toMatchObject({ ok: false, code: 'searx_unreachable', reason: expect.stringMatching(/HTTP 403 \(is the json format enabled\?\)/) });
  });

  it('an answer that is not JSON → ok:false searx_unreachable', async () => {
    mode = 'html';
    const reply = await search.query({ query: 'drael html' });
    expect(reply).toMatchObject({ ok: false, code: 'searx_unreachable', reason: expect.stringMatching(/not JSON/) });
  });
});
