import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, SearxClient, type SearxEngineInfo } from './searx.client.js';

// A stand-in for SearXNG's /config on a real socket: which engines it lists, how slowly, or failing.
let engineName = 'one';
let delayMs = 0;
let failing = false;
let configCalls = 0;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    configCalls++;
    const body = JSON.stringify({ engines: [{ name: engineName, categories: ['general'], enabled: true, time_range_support: true }] });
    setTimeout(() => {
      if (failing) res.writeHead(500).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    }, delayMs);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));
beforeEach(() => {
  engineName = 'one';
  delayMs = 0;
  failing = false;
  configCalls = 0;
});

const names = async (client: SearxClient) => (await client.engines()).map((e) => e.name);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SearxClient.engines', () => {
  it('asks /config once, then answers from the list it has while that is fresh', async () => {
    const client = new SearxClient(url, 2_000, 60_000);
    // The first look-up is waited for; the list in hand is not.
    expect(client.engines()).toBeInstanceOf(Promise);
    expect(await names(client)).toEqual(['one']);
    expect(client.engines()).not.toBeInstanceOf(Promise);
    expect(await names(client)).toEqual(['one']);
    expect(configCalls).toBe(1);
  });

  it('past its age, the list in hand answers at once while a fresh one is fetched beside it', async () => {
    const client = new SearxClient(url, 2_000, 50);
    await client.engines();
    await sleep(80);
    engineName = 'two';
    delayMs = 400;
    // The list in hand, as it is: no wait for the slow /config.
    const inHand = client.engines();
    expect(inHand).not.toBeInstanceOf(Promise);
    expect((inHand as SearxEngineInfo[]).map((e) => e.name)).toEqual(['one']);
    expect(await names(client)).toEqual(['one']);
    // once the refresh lands (allowing for a loaded machine), the new list answers
    for (let i = 0; i < 100 && (await names(client))[0] !== 'two'; i++) await sleep(50);
    expect(await names(client)).toEqual(['two']);
    expect(configCalls).toBe(2); // one refresh at a time
  });

  it('a failed refresh keeps the list in hand; a failed first look-up is not remembered', async () => {
    const client = new SearxClient(url, 2_000, 50);
    await client.engines();
    await sleep(80);
    failing = true;
    expect(await names(client)).toEqual(['one']);
    await sleep(50);
    expect(await names(client)).toEqual(['one']);

    const fresh = new SearxClient(url, 2_000, 60_000);
    await expect(fresh.engines()).rejects.toThrow(/HTTP 500/);
    failing = false;
    expect(await names(fresh)).toEqual(['one']);
  });
});

// SearXNG's /search over a real socket, answering in the ways the client must tell apart.
describe('SearxClient.search over HTTP', () => {
  let mode: 'ok' | 'sparse' | 'stall-body' | 'cut' | 'endless' = 'ok';
  // What the endless answer wrote before the client let go.
  let endlessWritten = 0;
  let connections = 0;
  let seen: { url?: string; accept?: string } = {};
  let searx: Server;
  let searxUrl: string;
  beforeAll(async () => {
    searx = createServer((req, res) => {
      seen = { url: req.url, accept: req.headers.accept };
      // The second result has no url: not a result Drael can use.
      const body = JSON.stringify({
        results: [
          { url: 'https://a.example/', title: 'A', content: 'a', engines: ['one'] },
          { title: 'no url', engines: ['one'] },
        ],
        unresponsive_engines: [['two', 'timeout']],
      });
      // SearXNG's fields Drael never reads, a result without a title, one whose title is not a
      // string, and no unresponsive_engines at all.
      const sparse = JSON.stringify({
        query: 'q',
        number_of_results: 0,
        results: [
          { url: 'https://b.example/', content: null, engines: ['one'], score: 1, parsed_url: ['https', 'b.example', '/', '', '', ''] },
          { url: 'https://c.example/', title: 42, engines: ['one'] },
        ],
        answers: [],
      });
      if (mode === 'ok') res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else if (mode === 'sparse') res.writeHead(200, { 'content-type': 'application/json' }).end(sparse);
      else if (mode === 'endless') {
        // A valid answer's start, then a snippet that goes on for as long as the client reads (64 MB at most).
        res.writeHead(200, { 'content-type': 'application/json' }).write('{"results":[{"url":"https://a.example/","content":"');
        const piece = 'a'.repeat(64 * 1024);
        const more = () => {
          while (!res.destroyed && endlessWritten < 64 * 1024 * 1024) {
            endlessWritten += piece.length;
            if (!res.write(piece)) return void res.once('drain', more);
          }
        };
        more();
      } else if (mode === 'stall-body')
        res.writeHead(200, { 'content-type': 'application/json' }).write(body.slice(0, 10)); // never ends
      else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).write(body.slice(0, 10));
        setTimeout(() => res.destroy(), 20);
      }
    });
    searx.on('connection', () => connections++);
    await new Promise<void>((r) => searx.listen(0, '127.0.0.1', r));
    searxUrl = `http://127.0.0.1:${(searx.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    searx.closeAllConnections();
    return new Promise((r) => searx.close(r));
  });
  beforeEach(() => {
    mode = 'ok';
    connections = 0;
  });

  it('asks /search with the query, json format and general category; reads results (skipping one without a url) and failed engines', async () => {
    const client = new SearxClient(searxUrl, 2_000);
    const answer = await client.search({ query: 'drael search', freshness: 'week' });
    expect(seen.accept).toBe('application/json');
    expect(Object.fromEntries(new URL(seen.url!, searxUrl).searchParams)).toEqual({ q: 'drael search', format: 'json', categories: 'general', time_range: 'week' });
    expect([...answer.results].map((r) => r.url)).toEqual(['https://a.example/']);
    expect(answer.unresponsive).toEqual([{ engine: 'two', reason: 'timeout' }]);
  });

  it('takes an answer with fields it does not read and without unresponsive_engines; skips a result whose title is not a string', async () => {
    mode = 'sparse';
    const client = new SearxClient(searxUrl, 2_000);
    const answer = await client.search({ query: 'drael search' });
    const results = [...answer.results];
    expect(results.map((r) => r.url)).toEqual(['https://b.example/']);
    expect(results[0]?.title).toBeUndefined();
    expect(answer.unresponsive).toEqual([]);
  });

  it('keeps the connection for the next search where the server allows it', async () => {
    const client = new SearxClient(searxUrl, 2_000);
    await client.search({ query: 'one' });
    await client.search({ query: 'two' });
    expect(connections).toBe(1);
  });

  it('the timeout covers the body: headers then silence → unreachable, no answer within the timeout', async () => {
    mode = 'stall-body';
    const client = new SearxClient(searxUrl, 300);
    const started = performance.now();
    await expect(client.search({ query: 'x' })).rejects.toThrow(/unreachable: no answer within 300 ms/);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('an answer larger than any page of results is dropped as soon as it passes the bound, not held and parsed (200 MB took 2.5 s of the loop and 736 MB)', async () => {
    mode = 'endless';
    endlessWritten = 0;
    const client = new SearxClient(searxUrl, 10_000);
    await expect(client.search({ query: 'x' })).rejects.toThrow(`SearXNG answered more than ${MAX_ANSWER_BYTES} bytes`);
    // The client let go near the bound (what the sockets' buffers held beyond it), not at the end.
    expect(endlessWritten).toBeLessThan(MAX_ANSWER_BYTES * 4);
  });

  it('an answer cut off mid-body → unreachable (never a partial parse)', async () => {
    mode = 'cut';
    const client = new SearxClient(searxUrl, 2_000);
    await expect(client.search({ query: 'x' })).rejects.toThrow(/SearXNG at .* is unreachable/);
  });
});
