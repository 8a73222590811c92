import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NatsRpcClient, wireSubject } from '@drael/nats-rpc';
import { createTestKey, startGatewayProcess, startServiceProcess, testPrefix, type GatewayProcess, type ServiceProcess } from '@drael/test-support';

// POST /v1/tools/fetch end to end: HTTP → gateway → NATS → the built fetch service → a page
// server. The fetch service opens only 127.0.0.2 (the page server) in its SSRF guard; every
// other loopback address keeps the production rules.
let gateway: GatewayProcess;
let fetchService: ServiceProcess;
let pages: Server;
let origin: string;
const prefix = testPrefix('gw-fetch');

const ARTICLE = `<!doctype html><html lang="en"><head><title>Loader hooks</title><link rel="canonical" href="https://docs.example/hooks"></head><body>
<nav><a href="/">Home</a></nav><article><h1>Loader hooks</h1>
${Array.from({ length: 8 }, (_, i) => `<p>Paragraph ${i + 1}: module customization hooks let a loader resolve and load modules; this sentence pads the text.</p>`).join('\n')}
<h2>Permissions</h2><p>The permission model restricts file system access to granted paths only.</p></article></body></html>`;

function auth(): Record<string, string> {
  // Auth is added globally by the billing engineer's gateway process helper when present.
  const withAuth = gateway as unknown as { authHeaders?: Record<string, string> };
  return withAuth.authHeaders ?? {};
}

async function post(body: unknown, headers = auth(), path = '/v1/tools/fetch'): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  pages = createServer((req, res) => {
    if (req.url?.startsWith('/article')) res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    else if (req.url === '/image') res.writeHead(200, { 'content-type': 'image/png' }).end('png');
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not here</p>');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.2', resolve));
  origin = `http://127.0.0.2:${(pages.address() as AddressInfo).port}`;
  fetchService = await startServiceProcess('fetch', {
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    DRAEL_NATS_PREFIX: prefix,
    FETCH_CACHE_PREFIX: `${prefix}:`,
    FETCH_TEST_ALLOW_CIDRS: '127.0.0.2/32',
    FETCH_BROWSER: 'off',
    TOR_SOCKS_URL: '',
  });
  gateway = await startGatewayProcess({
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'fetch',
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: 'http://127.0.0.1:9/v1', model: 'x' } }),
  });
});

afterAll(async () => {
  await gateway?.stop();
  await fetchService?.stop();
  await new Promise((resolve) => pages?.close(resolve));
});

describe('POST /v1/tools/fetch', () => {
  it('returns the page as markdown with its metadata', async () => {
    const { status, json } = await post({ url: `${origin}/article` });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      url: `${origin}/article`,
      final_url: `${origin}/article`,
      title: 'Loader hooks',
      canonical: 'https://docs.example/hooks',
      lang: 'en',
      content_type: 'text/html',
      truncated: false,
      cached: false,
    });
    expect(json.content).toContain('Paragraph 8: module customization hooks');
    expect(json.chars).toBe((json.content as string).length);
  });

  it('focus and max_chars shape the content; the second call is cached', async () => {
    const { status, json } = await post({ url: `${origin}/article`, focus: 'permission model', max_chars: 200 });
    expect(status).toBe(200);
    expect(json.content).toContain('permission model restricts');
    expect(json.content).not.toContain('Paragraph 3');
    expect(json.chars as number).toBeLessThanOrEqual(200);
    const again = await post({ url: `${origin}/article`, focus: 'permission model', max_chars: 200 });
    expect(again.json.cached).toBe(true);
  });

  it.each([
    ['loopback', 'http://127.0.0.1/'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['credentials', `http://user:pw@127.0.0.2/`],
    ['a non-HTTP scheme', 'file:///etc/passwd'],
  ])('%s → 400 bad_request in the OpenAI envelope', async (_label, url) => {
    const { status, json } = await post({ url });
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { type: 'invalid_request_error', code: 'bad_request', param: 'url' } });
  });

  it('a missing url → 400', async () => {
    const { status, json } = await post({ max_chars: 10 });
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { type: 'invalid_request_error', param: 'url' } });
  });

  it('render is not part of the public body → 400', async () => {
    const { status } = await post({ url: `${origin}/article`, render: 'browser' });
    expect(status).toBe(400);
  });

  it('a non-2xx upstream → 502 upstream_error with details {status, url}', async () => {
    const { status, json } = await post({ url: `${origin}/missing` });
    expect(status).toBe(502);
    expect(json).toMatchObject({
      error: { type: 'api_error', code: 'upstream_error', details: { status: 404, url: `${origin}/missing` } },
    });
  });

  it('an unsupported content type → 415 unsupported_content_type', async () => {
    const { status, json } = await post({ url: `${origin}/image` });
    expect(status).toBe(415);
    expect(json).toMatchObject({ error: { code: 'unsupported_content_type' } });
  });
});

describe("the key's tool level (as for the catalogue's web_fetch and web_search)", () => {
  const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  let rpc: NatsRpcClient;
  let nc: NatsConnection;
  // A copy of every fetch.page.v1 request the gateway sends (a plain subscription beside the service's queue group).
  const sent: Record<string, unknown>[] = [];
  const bearer = (key: { api_key: string }) => ({ authorization: `Bearer ${key.api_key}` });

  beforeAll(async () => {
    rpc = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    nc = await connect({ servers: NATS_URL });
    const sub = nc.subscribe(wireSubject('fetch.page.v1', prefix));
    void (async () => {
      // Nest's packet ({ id, pattern, data }) or plain JSON: the request either way.
      for await (const m of sub) {
        const message = m.json<{ data?: Record<string, unknown> } & Record<string, unknown>>();
        sent.push(message.data ?? message);
      }
    })();
    await nc.flush();
  });
  afterAll(async () => {
    await nc?.close();
    await rpc?.close();
  });

  it('a key of level none is refused 403 tool_not_allowed on /v1/tools/fetch and /v1/tools/search, and nothing is sent', async () => {
    const none = await createTestKey(rpc, { tool_level: 'none' });
    const before = sent.length;
    const fetched = await post({ url: `${origin}/article` }, bearer(none));
    expect(fetched.status).toBe(403);
    expect(fetched.json).toMatchObject({ error: { type: 'permission_error', code: 'tool_not_allowed' } });
    const searched = await post({ query: 'anything' }, bearer(none), '/v1/tools/search');
    expect(searched.status).toBe(403);
    expect(searched.json).toMatchObject({ error: { type: 'permission_error', code: 'tool_not_allowed' } });
    await nc.flush();
    expect(sent.length).toBe(before);
  });

  it('below l4_browser a fetch is plain HTTP (never the real browser), in the account’s own context', async () => {
    const l1 = await createTestKey(rpc, { tool_level: 'l1_http' });
    const { status } = await post({ url: `${origin}/article?l1` }, bearer(l1));
    expect(status).toBe(200);
    await expect.poll(() => sent.find((r) => r.url === `${origin}/article?l1`)).toMatchObject({ render: 'http', tenant: l1.account_id });
    const l4 = await createTestKey(rpc, { tool_level: 'l4_browser' });
    expect((await post({ url: `${origin}/article?l4` }, bearer(l4))).status).toBe(200);
    await expect.poll(() => sent.find((r) => r.url === `${origin}/article?l4`)).toMatchObject({ render: 'auto', tenant: l4.account_id });
  });
});
