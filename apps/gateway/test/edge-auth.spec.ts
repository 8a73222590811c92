import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { createTestKey, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream, type TestKey } from '@drael/test-support';
import {
  concretePath,
  hasWholeAnswer,
  isEnvelope,
  parseRawAnswer,
  rawExchange,
  rawRequest,
  routesOf,
  serverHoldsConnection,
  wholeUploadThenRead,
  type LoggedRoute,
} from './edge-support.js';

/**
 * Issue 15's edge: authentication on the route Fastify matched (whatever spelling of the path
 * reached it), the key before the body, transport errors in the envelope, bounded timeouts.
 */
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const prefix = testPrefix('gw-edge');
let upstream: ScriptedUpstream;
// Answers far larger than two sockets' buffers, for clients that stop reading.
let bigUpstream: ScriptedUpstream;
let gateway: GatewayProcess;
let nats: NatsRpcClient;
let revoked: TestKey;
let routes: LoggedRoute[];

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'ok' }], whenExhausted: 'repeat' });
  bigUpstream = await startScriptedUpstream({
    turns: [],
    // Client tools: a flood (80 MiB, as fast as it is read); catalogue mode: 16 MiB of text in 4 KiB deltas.
    choose: (body: { tools?: unknown[] }) =>
      body.tools?.some((t) => (t as { function?: { name?: string } }).function?.name === 'client_tool')
        ? { type: 'flood', bytes: 80 * MIB }
        : { type: 'text', content: Array.from({ length: 4096 }, () => 'x'.repeat(4096)) },
  });
  gateway = await startGatewayProcess({
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    AUTH_CACHE_TTL_MS: '60000',
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
    // Short, so the timeout tests finish quickly; the defaults are 10 s and 15 s.
    HTTP_HEADERS_TIMEOUT_MS: '2000',
    HTTP_BODY_IDLE_TIMEOUT_MS: '3000',
    HTTP_SEND_IDLE_TIMEOUT_MS: '3000',
    DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' }, 'gpt-big': { base_url: bigUpstream.baseUrl, model: 'big-model' } }),
  });
  nats = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  revoked = await createTestKey(nats, {});
  await nats.request(billingCatalog.revokeKey, { account_id: revoked.account_id, key_id: revoked.key_id });
  routes = await routesOf(gateway);
});

afterAll(async () => {
  await nats?.close();
  await gateway?.stop();
  await upstream?.close();
  await bigUpstream?.close();
});

const json = { 'content-type': 'application/json' };
const MIB = 1024 * 1024;
const bodyFor = (method: string) => (['POST', 'PUT', 'PATCH'].includes(method) ? '{}' : undefined);

/** Spellings of one path that a router might fold onto a route, or not. */
function spellings(path: string): { form: string; path: string; sameRoute: boolean }[] {
  const out: { form: string; path: string; sameRoute: boolean }[] = [{ form: 'as written', path, sameRoute: true }];
  const add = (form: string, p: string, sameRoute = false) => {
    if (p !== path) out.push({ form, path: p, sameRoute });
  };
  // Percent-encoding an unreserved character: the router decodes it, so the same route answers.
  add('%76 for v', path.replace('/v', '/%76'), true);
  add('%31 for 1', path.replace('1', '%31'), true);
  add(
    'first letter encoded',
    path.replace(/^\/([a-z])/, (_m, c: string) => `/%${c.charCodeAt(0).toString(16)}`),
    true,
  );
  add('%2F for the second slash', path.replace(/^(\/[^/]+)\//, '$1%2F'));
  add('%2f lower case', path.replace(/^(\/[^/]+)\//, '$1%2f'));
  add('leading //', `/${path}`);
  add('inner //', path.replace(/^(\/[^/]+)\//, '$1//'));
  add('/./ prefix', `/.${path}`);
  add('/./ inside', path.replace(/^(\/[^/]+)\//, '$1/./'));
  add('%2e segment', path.replace(/^(\/[^/]+)\//, '$1/%2e/'));
  add('upper case', path.toUpperCase());
  add('trailing slash', `${path}/`);
  add('matrix param at the end', `${path};x=1`);
  add('matrix param on the first segment', path.replace(/^(\/[^/]+)/, '$1;x'));
  add('query string', `${path}?x=1`, true);
  add('fragment-looking %23', `${path}%23`);
  return out;
}

describe('every registered route, without a key', () => {
  it("the public routes are exactly the health probes, the published plans, the API description and the console's static files", () => {
    const isPublic = routes.filter((r) => r.access === 'public').map((r) => `${r.method} ${r.url}`);
    expect(isPublic.sort()).toEqual([
      'GET /api/billing/plans',
      'GET /console',
      'GET /console/*',
      'GET /docs',
      'GET /healthz',
      'GET /openapi.json',
      'GET /readyz',
      'HEAD /api/billing/plans',
      'HEAD /console',
      'HEAD /console/*',
      'HEAD /docs',
      'HEAD /healthz',
      'HEAD /openapi.json',
      'HEAD /readyz',
    ]);
    // Every admin route, and only those, is under /admin.
    for (const r of routes) expect(r.access === 'admin', r.url).toBe(r.url.startsWith('/admin'));
    // The table is the real one: the routes every other test uses are in it.
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(['POST /v1/chat/completions', 'POST /v1/tools/search', 'POST /v1/tools/fetch', 'GET /v1/models', 'POST /v1/agents', 'POST /admin/accounts']),
    );
  });

  it('/openapi.json describes exactly the registered routes, each with the access it is registered with', async () => {
    const doc = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { 'x-drael-route': string; 'x-drael-access': string }>> };
    const documented = Object.values(doc.paths).flatMap((item) => Object.entries(item).map(([m, op]) => `${m.toUpperCase()} ${op['x-drael-route']} ${op['x-drael-access']}`));
    // Fastify's HEAD routes are its GETs' (the document says every GET answers HEAD).
    const registered = routes.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${r.url} ${r.access}`);
    expect(documented.sort()).toEqual(registered.sort());
  });

  it('no keyed or admin route answers 2xx or 3xx, as written or in any encoded spelling; as written it is 401 in the envelope', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.access !== 'public')) {
      for (const s of spellings(concretePath(route.url))) {
        const r = await rawRequest(gateway.url, route.method, s.path, json, bodyFor(route.method));
        const what = `${route.method} ${s.path} (${s.form}) → ${r.status}`;
        if (r.status < 400) failures.push(what);
        if (s.sameRoute && r.status !== 401) failures.push(`${what}, expected 401`);
        if (route.method !== 'HEAD' && !isEnvelope(r.body)) failures.push(`${what}: not the envelope: ${r.body.slice(0, 100)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('a revoked key, a malformed Authorization and an API key on an admin route are refused like no key', async () => {
    const failures: string[] = [];
    const refusedHeaders: Record<string, string>[] = [
      { authorization: `Bearer ${revoked.api_key}` },
      { authorization: 'Bearer' },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      { 'x-api-key': revoked.api_key },
    ];
    for (const route of routes.filter((r) => r.access !== 'public')) {
      const path = concretePath(route.url);
      for (const headers of [...refusedHeaders, ...(route.access === 'admin' ? [gateway.authHeaders] : [])]) {
        for (const p of [path, path.replace('/v', '/%76')]) {
          const r = await rawRequest(gateway.url, route.method, p, { ...json, ...headers }, bodyFor(route.method));
          if (r.status !== 401) failures.push(`${route.method} ${p} with ${JSON.stringify(headers).slice(0, 40)} → ${r.status}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('the calls the issue found open are closed: encoded paths reach no tool, model or upstream', async () => {
    const before = upstream.requests.length;
    const chatBody = JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] });
    for (const [method, path, body, headers] of [
      ['POST', '/%761/tools/search', '{"query":"x"}', {}],
      ['POST', '/%761/tools/fetch', '{"url":"http://example.com"}', {}],
      ['GET', '/%761/models', undefined, {}],
      ['GET', '/v%31/models', undefined, {}],
      ['GET', '/%761/receipts/public-key', undefined, {}],
      ['POST', '/%761/chat/completions', chatBody, {}],
      ['POST', '/%761/chat/completions', chatBody, { 'x-drael-server-tools': '0' }],
      ['POST', '/v1/chat/completions?x=1', chatBody, {}],
      ['POST', '/v1/chat/completions', chatBody, { 'content-type': 'application/json; charset=utf-8' }],
    ] as const) {
      const r = await rawRequest(gateway.url, method, path, { ...json, ...headers }, body);
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ error: { type: 'authentication_error', code: 'missing_api_key' } });
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('the public routes answer without a key, and a key-holding caller still gets the keyed routes', async () => {
    expect((await rawRequest(gateway.url, 'GET', '/healthz')).status).toBe(200);
    expect((await rawRequest(gateway.url, 'GET', '/api/billing/plans')).status).toBe(200);
    expect((await rawRequest(gateway.url, 'GET', '/%761/models', gateway.authHeaders)).status).toBe(200);
    const admin = await rawRequest(gateway.url, 'GET', `/admin/accounts/${gateway.key!.account_id}/usage`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(admin.status).toBe(200);
  });
});

/** Headers of a 30 MB upload; then only `sent` bytes of it, and the answer is awaited. */
async function bigUpload(path: string, headers: Record<string, string>, sent: number) {
  const head = `POST ${path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${30 * 1024 * 1024}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  const { text, closed, socket } = await rawExchange(gateway.url, head, Buffer.alloc(sent, 0x20), hasWholeAnswer);
  socket.destroy();
  return { ...parseRawAnswer(text), closed };
}

describe('the key before the body', () => {
  it('a 30 MB upload without a valid key is answered 401 after less than 1 MB of it was sent, and the connection is closed', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/v1/chat/completions', {}],
      ['/v1/chat/completions', { authorization: `Bearer ${revoked.api_key}` }],
      ['/%761/chat/completions', {}],
      ['/v1/agents', {}],
      ['/v1/agents', { authorization: `Bearer ${revoked.api_key}` }],
      ['/v1/tools/search', {}],
      ['/admin/accounts', {}],
      ['/admin/accounts', gateway.authHeaders],
    ];
    for (const [path, headers] of cases) {
      // 256 KiB of the 30 MiB: a server that waited for the body would never answer (and the
      // body idle timer would end it with 408, not 401).
      const r = await bigUpload(path, headers, 256 * 1024);
      expect(r.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
      expect(isEnvelope(r.body)).toBe(true);
      expect(r.head).toContain('connection: close');
    }
  });

  it('a client that writes its whole upload before it reads (as OpenAI SDKs do) still reads the refusal: the close lingers, no reset', async () => {
    const MiB = 1024 * 1024;
    const cases: [string, Record<string, string>, number, number, ('content-length' | 'chunked')?][] = [
      // The hot route, with no key, and with a revoked one (its verdict is a NATS round trip, so the
      // body's first megabytes fill the buffers and stop the socket's reads before the answer).
      ['/v1/chat/completions', {}, 8 * MiB, 401],
      ['/v1/chat/completions', { authorization: `Bearer ${revoked.api_key}` }, 8 * MiB, 401],
      // Fastify's routes: a hook's refusal, an unknown route, a path the router refuses.
      ['/v1/agents', {}, 8 * MiB, 401],
      ['/v1/no-such-route', gateway.authHeaders, 8 * MiB, 404],
      ['/v1/%zz', gateway.authHeaders, 8 * MiB, 400],
      // Over the 32 MiB body limit, with a valid key: the hot route's 413 and Fastify's.
      ['/v1/chat/completions', gateway.authHeaders, 40 * MiB, 413],
      ['/v1/agents', gateway.authHeaders, 40 * MiB, 413],
      // Chunked, so the limit is found only once 32 MiB have been read: refused mid-body.
      ['/v1/chat/completions', gateway.authHeaders, 40 * MiB, 413, 'chunked'],
      ['/v1/agents', gateway.authHeaders, 40 * MiB, 413, 'chunked'],
    ];
    for (const [path, headers, size, status, framing] of cases) {
      const r = await wholeUploadThenRead(gateway.url, path, headers, size, framing);
      const what = `${path} ${JSON.stringify(headers)} ${size} bytes`;
      expect(r.writeError, what).toBeUndefined();
      const answer = parseRawAnswer(r.text);
      expect(answer.status, what).toBe(status);
      expect(isEnvelope(answer.body), what).toBe(true);
      expect(answer.head, what).toContain('connection: close');
    }
  });

  it('a refused client that stops sending and keeps its side open is let go all the same: the linger is bounded', async () => {
    const { hostname, port } = new URL(gateway.url);
    // allowHalfOpen: this client does not close its side when the server's FIN comes.
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${8 * 1024 * 1024}\r\n\r\n`);
    socket.write(Buffer.alloc(1024 * 1024, 0x20));
    await vi.waitFor(() => expect(parseRawAnswer(text).status).toBe(401), { timeout: 5_000 });
    expect(serverHoldsConnection(Number(port), socket.localPort!)).toBe(true);
    // Released once the client has been quiet for HTTP_BODY_IDLE_TIMEOUT_MS (3 s here), long
    // before the request timeout (300 s).
    await vi.waitFor(() => expect(serverHoldsConnection(Number(port), socket.localPort!)).toBe(false), { timeout: 20_000, interval: 250 });
    socket.destroy();
  }, 30_000);

  it('a refused client that goes on sending is cut off after 64 MiB: what the linger reads is bounded', async () => {
    // Its write fails (the reset): a server that read on would have taken all 256 MiB. (The 401 was
    // sent first; a client that reads only after writing loses it to the reset.)
    const r = await wholeUploadThenRead(gateway.url, '/v1/chat/completions', {}, 256 * 1024 * 1024);
    expect(['EPIPE', 'ECONNRESET']).toContain(r.writeError);
  });

  it('a client that asks `Expect: 100-continue` gets its refusal instead of the 100, and sends no body; a wanted body is asked for', async () => {
    // Refused before the body is read: the answer comes in place of "100 Continue" (the client
    // never uploads), and the connection closes.
    const refused: [string, Record<string, string>, number, number][] = [
      ['/v1/chat/completions', {}, 4096, 401],
      ['/v1/agents', {}, 4096, 401],
      ['/v1/no-such-route', gateway.authHeaders, 4096, 404],
      ['/v1/chat/completions', gateway.authHeaders, 40 * 1024 * 1024, 413],
      ['/v1/agents', gateway.authHeaders, 40 * 1024 * 1024, 413],
    ];
    for (const [path, headers, length, status] of refused) {
      const r = await askToContinue(path, headers, length);
      const what = `${path} ${JSON.stringify(headers)}`;
      expect(r.continued, what).toBe(false);
      const answer = parseRawAnswer(r.text);
      expect(answer.status, what).toBe(status);
      expect(isEnvelope(answer.body), what).toBe(true);
      expect(answer.head, what).toContain('connection: close');
    }
    // Wanted: the 100 comes once the key is verified and the body is read, on the hot route and on
    // Fastify's (whose body is then refused by its own validation, after it was read).
    const chat = await askToContinue(
      '/v1/chat/completions',
      { ...gateway.authHeaders, 'x-drael-server-tools': '0' },
      JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(chat.continued).toBe(true);
    expect(parseRawAnswer(chat.after).status).toBe(200);
    const agents = await askToContinue('/v1/agents', gateway.authHeaders, '{}');
    expect(agents.continued).toBe(true);
    expect(parseRawAnswer(agents.after).status).toBe(400);
  });

  it('no key with malformed JSON is 401, not invalid_json', async () => {
    for (const path of ['/v1/chat/completions', '/v1/agents', '/%761/chat/completions']) {
      const r = await rawRequest(gateway.url, 'POST', path, json, '{bad');
      expect(r.status).toBe(401);
    }
  });
});

describe('transport errors, in the envelope', () => {
  const expectEnvelope = (r: { status: number; body: string }, status: number) => {
    expect(r.status).toBe(status);
    expect(isEnvelope(r.body), r.body).toBe(true);
  };

  it('bad percent-encoding (400), an over-long path parameter (414), unsupported Content-Encoding (415), a body over the limit (413)', async () => {
    expectEnvelope(await rawRequest(gateway.url, 'GET', '/v1/%zz', gateway.authHeaders), 400);
    expectEnvelope(await rawRequest(gateway.url, 'GET', '/v1/agents/%ED%A0%80', gateway.authHeaders), 400);
    expectEnvelope(await rawRequest(gateway.url, 'GET', `/v1/agents/${'a'.repeat(150)}`, gateway.authHeaders), 414);
    for (const path of ['/v1/chat/completions', '/v1/agents']) {
      const gz = await rawRequest(gateway.url, 'POST', path, { ...json, ...gateway.authHeaders, 'content-encoding': 'gzip' }, Buffer.from([0x1f, 0x8b, 0, 0]));
      expectEnvelope(gz, 415);
      expect(JSON.parse(gz.body).error.code).toBe('unsupported_content_encoding');
      // Without a key it is still the key that is refused first.
      expect((await rawRequest(gateway.url, 'POST', path, { ...json, 'content-encoding': 'gzip' }, '{}')).status).toBe(401);
    }
    const big = await rawExchange(
      gateway.url,
      `POST /v1/agents HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\nauthorization: Bearer ${gateway.apiKey}\r\ncontent-length: ${64 * 1024 * 1024}\r\n\r\n`,
      undefined,
      hasWholeAnswer,
    );
    big.socket.destroy();
    expectEnvelope(parseRawAnswer(big.text), 413);
  });

  it("what Node's HTTP parser refuses: a malformed request (400) and headers too large (431)", async () => {
    const garbage = await rawExchange(gateway.url, 'HELLO THERE\r\n\r\n', undefined);
    expectEnvelope(parseRawAnswer(garbage.text), 400);
    const huge = await rawExchange(gateway.url, `GET /v1/models HTTP/1.1\r\nhost: t\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, undefined);
    expectEnvelope(parseRawAnswer(huge.text), 431);
    const nul = await rawExchange(gateway.url, 'GET /v1/models HTTP/1.1\r\nhost: t\r\nx-a: a\0b\r\n\r\n', undefined);
    expectEnvelope(parseRawAnswer(nul.text), 400);
  });

  it('what Node would refuse with an empty body or no answer at all: no Host (400), an unknown Expect (417), CONNECT (400)', async () => {
    const noHost = await rawExchange(gateway.url, `GET /v1/models HTTP/1.1\r\nauthorization: Bearer ${gateway.apiKey}\r\n\r\n`, undefined);
    expectEnvelope(parseRawAnswer(noHost.text), 400);
    expect(parseRawAnswer(noHost.text).head).toContain('connection: close');
    // HTTP/1.0 has no Host requirement: served.
    const old = await rawExchange(gateway.url, `GET /v1/models HTTP/1.0\r\nauthorization: Bearer ${gateway.apiKey}\r\n\r\n`, undefined);
    expect(parseRawAnswer(old.text).status).toBe(200);
    const expectation = await rawExchange(
      gateway.url,
      `POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 2\r\nexpect: 200-ok\r\n\r\n`,
      undefined,
      hasWholeAnswer,
    );
    expectation.socket.destroy();
    expectEnvelope(parseRawAnswer(expectation.text), 417);
    const tunnel = await rawExchange(gateway.url, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1:22\r\n\r\n', undefined);
    expectEnvelope(parseRawAnswer(tunnel.text), 400);
    expect(tunnel.closed).toBe(true);
  });

  it('stalled headers get 408 and the connection is closed (HTTP_HEADERS_TIMEOUT_MS)', async () => {
    const r = await rawExchange(gateway.url, 'GET /v1/models HTTP/1.1\r\nhost: t\r\n', undefined);
    expect(r.closed).toBe(true);
    expectEnvelope(parseRawAnswer(r.text), 408);
  });

  it("a body that stalls is answered 408 and closed (HTTP_BODY_IDLE_TIMEOUT_MS), on the hot route and on Fastify's", async () => {
    // A first call puts the key's verdict in the cache, as for any caller past its first request.
    expect((await rawRequest(gateway.url, 'GET', '/v1/models', gateway.authHeaders)).status).toBe(200);
    for (const path of ['/v1/chat/completions', '/v1/agents']) {
      const head = `POST ${path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\nauthorization: Bearer ${gateway.apiKey}\r\ncontent-length: 100\r\n\r\n`;
      const r = await rawExchange(gateway.url, head, Buffer.from('{"model":'));
      expect(r.closed, path).toBe(true);
      const answer = parseRawAnswer(r.text);
      expect(answer.status, path).toBe(408);
      expect(isEnvelope(answer.body)).toBe(true);
    }
  });
});

describe('hostile input is a 4xx decided at the edge', () => {
  const post = (path: string, body: string) => rawRequest(gateway.url, 'POST', path, { ...json, ...gateway.authHeaders }, body);
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('NUL and lone surrogates in any JSON string or key → 400 naming the param, before any service is asked', async () => {
    const chat = (content: string) => `{"model":"gpt-test","messages":[{"role":"user","content":${content}}]}`;
    for (const [path, body, param] of [
      ['/v1/chat/completions', chat('"a\\u0000b"'), 'messages[0].content'],
      ['/v1/chat/completions', chat('"\\ud800"'), 'messages[0].content'],
      ['/v1/chat/completions', chat('"\\udc00x"'), 'messages[0].content'],
      ['/v1/agents', '{"name":"a\\u0000","model":"gpt-test","instructions":"x"}', 'name'],
      ['/v1/agents', '{"name":"ok","\\u0000":1}', null],
      ['/v1/tools/search', '{"query":"\\uDBFF"}', 'query'],
      ['/admin/accounts', '{"name":"\\u0000"}', 'name'],
    ] as const) {
      const headers = path.startsWith('/admin') ? { ...json, authorization: `Bearer ${ADMIN_TOKEN}` } : { ...json, ...gateway.authHeaders };
      const r = await rawRequest(gateway.url, 'POST', path, headers, body);
      expect(r.status, `${path} ${body}`).toBe(400);
      expect(JSON.parse(r.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request', param } });
    }
    // A well-formed pair and an escaped backslash before "u0000" are ordinary text.
    const fine = await post('/v1/chat/completions', chat('"\\ud83d\\ude00 \\\\u0000"'));
    expect(fine.status).toBe(200);
  });

  it(`JSON nested deeper than 64 levels → 400 invalid_request_error; 64 levels pass the edge`, async () => {
    for (const path of ['/v1/chat/completions', '/v1/agents', '/v1/responses', '/v1/tools/search']) {
      const r = await post(path, nested(5000));
      expect(r.status, path).toBe(400);
      expect(JSON.parse(r.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request' } });
      expect(JSON.parse(r.body).error.message).toContain('64');
      const deep65 = await post(path, nested(65));
      expect(JSON.parse(deep65.body).error.message).toContain('64');
      const deep64 = await post(path, nested(64));
      expect(deep64.status).toBe(400);
      expect(JSON.parse(deep64.body).error.message).not.toContain('64 levels');
    }
  });

  it('NUL or a lone surrogate in a path id → 404; in a query value → 400', async () => {
    for (const path of ['/v1/agents/%00', '/v1/runs/a%00b', '/v1/responses/%00', '/v1/sessions/s%00/files']) {
      const r = await rawRequest(gateway.url, 'GET', path, gateway.authHeaders);
      expect(r.status, path).toBe(404);
      expect(JSON.parse(r.body)).toMatchObject({ error: { type: 'not_found_error', code: 'not_found' } });
    }
    for (const path of ['/v1/runs?before=%00', '/v1/runs?agent_id=a%00', '/v1/agents?before=x&before=%00', '/api/billing/usage?account_id=%00']) {
      const r = await rawRequest(gateway.url, 'GET', path, gateway.authHeaders);
      expect(r.status, path).toBe(400);
      expect(isEnvelope(r.body)).toBe(true);
    }
  });
});

describe('a client that stops reading', () => {
  const clientTools = [{ type: 'function', function: { name: 'client_tool', parameters: { type: 'object', properties: {} } } }];
  it.each([
    // The answer still coming from the upstream when the client stops: that call is dropped too.
    ['proxy mode, streamed', { tools: clientTools, stream: true }, true],
    ['proxy mode, whole', { tools: clientTools }, true],
    ['catalogue mode, streamed', { stream: true }, true],
    // The upstream's whole answer was read before the client's was written.
    ['catalogue mode, whole', {}, false],
  ])(
    '%s: is closed after HTTP_SEND_IDLE_TIMEOUT_MS, its upstream call dropped',
    async (_mode, fields, upstreamStillAnswering) => {
      const body = JSON.stringify({ model: 'gpt-big', messages: [{ role: 'user', content: 'a long answer, please' }], ...fields });
      const asked = bigUpstream.requests.length;
      const dropped = bigUpstream.aborted.length;
      const { hostname, port } = new URL(gateway.url);
      const socket = connect({ host: hostname, port: Number(port) });
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // Reads nothing, ever: what the gateway sends fills the two kernel buffers and then waits.
      socket.pause();
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\nauthorization: Bearer ${gateway.apiKey}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await bigUpstream.waitForRequests(asked + 1, 20_000);
      await vi.waitFor(() => expect(serverHoldsConnection(Number(port), socket.localPort!)).toBe(true), { timeout: 5_000, interval: 50 });
      // Let go: the gateway no longer holds the socket, and the upstream saw its call dropped.
      await vi.waitFor(() => expect(serverHoldsConnection(Number(port), socket.localPort!)).toBe(false), { timeout: 30_000, interval: 250 });
      if (upstreamStillAnswering) await vi.waitFor(() => expect(bigUpstream.aborted.length).toBe(dropped + 1), { timeout: 10_000, interval: 100 });
      socket.destroy();
      // The gateway answers the next client as before.
      expect((await rawRequest(gateway.url, 'GET', '/v1/models', gateway.authHeaders)).status).toBe(200);
    },
    60_000,
  );
});

/**
 * A request with `Expect: 100-continue` whose body (`body`, or `body` spaces) is sent only once
 * the server says "100 Continue", as curl does. `continued`: the 100 came; `after`: what followed it.
 */
function askToContinue(path: string, headers: Record<string, string>, body: string | number): Promise<{ continued: boolean; text: string; after: string }> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.alloc(body, 0x20);
  const { hostname, port } = new URL(gateway.url);
  const head = `POST ${path} HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: ${bytes.length}\r\nexpect: 100-continue\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    let continued = false;
    const done = () => {
      socket.destroy();
      resolve({ continued, text, after: continued ? text.slice(text.indexOf(CONTINUE) + CONTINUE.length) : text });
    };
    socket.on('connect', () => socket.write(head));
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (!continued && text.startsWith(CONTINUE)) {
        continued = true;
        socket.write(bytes);
      }
      const rest = continued ? text.slice(CONTINUE.length) : text;
      if (hasWholeAnswer(rest)) done();
    });
    socket.on('close', done);
    socket.on('error', reject);
  });
}
