import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchCatalog, type FetchPageReply } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { metrics, sampleValue } from '@drael/metrics';
import { startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';
import type { FetchRuntime } from '../src/fetch.runtime.js';
import { FIXTURE_ALLOW, FIXTURE_HOST, article, html, makeRuntime, startFixtureServer, type FixtureServer } from './support/fixtures.js';

// Issue F8 on the browser path (the sandbox had the same defect): one tenant's burst of browser
// renders took every page and an unbounded queue, every other tenant waited behind it, and a
// waiter whose caller had given up still rendered later, for nobody. The page server holds each
// page's response until the test lets it go, so the pages stay taken as long as the test wants.

/** A page server that holds every response until released; `seen` is the order pages were asked for. */
async function startHoldingServer() {
  const held = new Map<string, ServerResponse>();
  const seen: string[] = [];
  let releaseAll = false;
  const answer = (id: string, res: ServerResponse) => html(res, article(`Page ${id}`, 8));
  const server = await startFixtureServer(FIXTURE_HOST, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/page') return void res.writeHead(404).end();
    const id = url.searchParams.get('id')!;
    seen.push(id);
    if (releaseAll) answer(id, res);
    else held.set(id, res);
  });
  return {
    server,
    seen,
    url: (id: string) => server.url(`/page?id=${id}`),
    release(id: string) {
      const res = held.get(id);
      held.delete(id);
      if (res) answer(id, res);
    },
    /** Lets every held page go, and answers every later one at once. */
    releaseEverything() {
      releaseAll = true;
      for (const id of [...held.keys()]) this.release(id);
    },
  };
}

/** Waits for something the service does on its own (a page asked for, a refusal); fails if it never comes. */
async function until(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (done()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

type Outcome = { ok: true; reply: FetchPageReply } | { ok: false; error: RpcError };
const settle = (p: Promise<FetchPageReply>, into: Outcome[]) =>
  p.then(
    (reply) => void into.push({ ok: true, reply }),
    (error: RpcError) => void into.push({ ok: false, error }),
  );

describe('browser pages over NATS: one tenant floods, another is served', () => {
  const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const prefix = testPrefix('fetch-fair');
  let service: ServiceProcess;
  let client: NatsRpcClient;
  let pages: Awaited<ReturnType<typeof startHoldingServer>>;

  beforeAll(async () => {
    pages = await startHoldingServer();
    // The defaults' shape: 2 pages, 8 waiting; a tenant's share is half the pages (1) and a
    // quarter of the queue (2).
    service = await startServiceProcess('fetch', {
      NATS_URL,
      DRAEL_NATS_PREFIX: prefix,
      FETCH_CACHE_PREFIX: `${prefix}:`,
      TOR_SOCKS_URL: '',
      FETCH_TEST_ALLOW_CIDRS: FIXTURE_ALLOW,
      FETCH_BROWSER_CONCURRENCY: '2',
      FETCH_BROWSER_MAX_QUEUE: '8',
    });
    client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  });

  afterAll(async () => {
    pages?.releaseEverything();
    await client?.close();
    await service?.stop();
    await pages?.server.close();
  });

  it("the flood holds its share of the pages, its excess is refused fetch_busy, and the other tenant's render goes before the flood's queue", async () => {
    const flood: Outcome[] = [];
    const floodDone = Array.from({ length: 6 }, (_, i) => settle(client.request(fetchCatalog.page, { url: pages.url(`a${i}`), render: 'browser', tenant: 'tenant-a' }), flood));
    // Past its share (1 rendering, 2 waiting) the flood is refused at once, while its pages are held.
    await until('three of the flood refused', () => flood.length >= 3);
    expect(flood.every((o) => !o.ok)).toBe(true);
    for (const o of flood) {
      const err = (o as { error: RpcError }).error;
      expect(err).toBeInstanceOf(RpcError);
      expect(err.code).toBe('fetch_busy');
      expect(err.retryable).toBe(true);
      expect(err.details).toMatchObject({ share: 'tenant', running: 1, queued: 2 });
      expect(err.message).toMatch(/this tenant's share of the browser is taken/);
    }
    await until('the flood asked for its first page', () => pages.seen.length >= 1);

    // The other tenant's one render: it gets a page while the flood's first is still held.
    const victim = client.request(fetchCatalog.page, { url: pages.url('b'), render: 'browser', tenant: 'tenant-b' });
    await until("the other tenant's page asked for", () => pages.seen.includes('b'));
    // The flood had one page, its share, not both.
    expect(pages.seen.filter((id) => id.startsWith('a'))).toHaveLength(1);
    pages.release('b');
    const reply = await victim;
    expect(reply.title).toBe('Page b');
    expect(reply.content).toContain('Paragraph 1 of Page b');

    // The flood's queued renders come after it, and answer.
    pages.releaseEverything();
    await Promise.all(floodDone);
    expect(flood.filter((o) => o.ok)).toHaveLength(3);
    expect(flood.filter((o) => !o.ok)).toHaveLength(3);
    expect(pages.seen).toHaveLength(4);
    expect(pages.seen[1]).toBe('b');
  });
});

describe('browser pages in process: a waiter whose caller gave up never renders', () => {
  let runtime: FetchRuntime;
  let pages: Awaited<ReturnType<typeof startHoldingServer>>;
  let site: FixtureServer;

  beforeAll(async () => {
    pages = await startHoldingServer();
    site = pages.server;
    // One page, four waiting (a tenant's share: 1 page, 1 waiting).
    runtime = makeRuntime({ allow: FIXTURE_ALLOW, cache: false, browserSlots: { FETCH_BROWSER_CONCURRENCY: 1, FETCH_BROWSER_MAX_QUEUE: 4 } });
    await runtime.browser!.warm();
  });

  afterAll(async () => {
    pages?.releaseEverything();
    await runtime?.close();
    await site?.close();
  });

  it('an aborted waiter leaves the queue at once, refused fetch_busy, and its page is never asked for; a waiter past its deadline likewise', async () => {
    const browser = runtime.browser!;
    const holder = browser.render(pages.url('held'), { tenant: 'tenant-a' });
    // Awaited below; a failure before that must fail this test, not surface as unhandled.
    holder.catch(() => undefined);
    await until('the held page asked for', () => pages.seen.includes('held'));

    const gaveUp = new AbortController();
    let abortedSettled = false;
    const aborted = browser.render(pages.url('aborted'), { tenant: 'tenant-c', signal: gaveUp.signal });
    aborted.then(
      () => (abortedSettled = true),
      () => (abortedSettled = true),
    );
    const late = browser.render(pages.url('late'), { tenant: 'tenant-e', deadline: Date.now() + 200 });
    late.catch(() => undefined);
    const patient = browser.render(pages.url('patient'), { tenant: 'tenant-d' });
    patient.catch(() => undefined);

    gaveUp.abort();
    // Refused while the only page is still held: it left the queue at once.
    await new Promise((r) => setImmediate(r));
    expect(abortedSettled).toBe(true);
    await expect(aborted).rejects.toMatchObject({ code: 'fetch_busy', retryable: true, details: { share: 'deadline' } });
    // Its caller's deadline passes while it waits: refused, never loaded.
    await expect(late).rejects.toMatchObject({ code: 'fetch_busy', retryable: true, details: { share: 'deadline' } });
    // The queue as scraped: the one render still waiting, of the four that may.
    const scraped = await metrics.registry.metrics();
    expect(sampleValue(scraped, 'drael_fetch_browser_queue_depth')).toBe(1);
    expect(sampleValue(scraped, 'drael_fetch_browser_queue_capacity')).toBe(4);

    pages.releaseEverything();
    expect((await holder).html).toContain('Page held');
    expect((await patient).html).toContain('Page patient');
    // The page went to the waiter still waiting; the others' pages were never asked for.
    expect(pages.seen).toEqual(['held', 'patient']);
  });
});
