import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleValue } from '@drael/metrics';
import { freePort, scrapeMetrics, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedUpstream } from '@drael/test-support';
import { isEnvelope, rawRequest } from './edge-support.js';

/**
 * What an outside test of "any OpenAI client, attacks, hostile input" finds on the HTTP surface:
 * a known path with the wrong method (405 + Allow), browsers (CORS, off unless allowlisted), a
 * JSON body in another charset (415), and proxy mode's raw bytes (the upstream must read the
 * `model`, `stream` and `tools` the gateway validated, routed and billed).
 */
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const ALLOWED = 'https://app.example.com';
const prefix = testPrefix('gw-surface');
let upstream: ScriptedUpstream;
// CORS_ALLOWED_ORIGINS set: a browser app at ALLOWED may call it.
let gateway: GatewayProcess;
// The default configuration: no CORS at all (same billing, same NATS prefix).
let closed: GatewayProcess;
// The CORS gateway's /metrics.
let metricsUrl: string;

const TOOLS = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
const HELLO = [{ role: 'user', content: 'hello' }];

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [{ type: 'text', content: 'ok' }], whenExhausted: 'repeat' });
  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl:`,
    DRAEL_MODELS: JSON.stringify({
      // alias = upstream name: proxy mode may forward the client's bytes as they came.
      'same-name': { base_url: upstream.baseUrl, model: 'same-name' },
      'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' },
    }),
  };
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}`;
  gateway = await startGatewayProcess(
    { ...env, CORS_ALLOWED_ORIGINS: `${ALLOWED}, http://localhost:3000`, METRICS_PORT: String(metricsPort) },
    { billing: { rate_limit: { per_minute: 100_000, per_hour: 1_000_000 } } },
  );
  closed = await startGatewayProcess(env, { billing: false });
}, 120_000);

afterAll(async () => {
  await closed?.stop();
  await gateway?.stop();
  await upstream?.close();
});

const auth = () => gateway.authHeaders;
const errorOf = (body: string) => (JSON.parse(body) as { error: Record<string, unknown> }).error;

describe('a known path with the wrong method: 405 with Allow, in the envelope', () => {
  it('the hot routes (chat completions, tools/search) name POST', async () => {
    for (const [method, path] of [
      ['GET', '/v1/chat/completions'],
      ['DELETE', '/v1/chat/completions'],
      ['PUT', '/v1/tools/search'],
      ['OPTIONS', '/v1/chat/completions'],
    ] as const) {
      const r = await rawRequest(gateway.url, method, path, auth());
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(r.headers.allow).toBe('POST');
      expect(isEnvelope(r.body)).toBe(true);
      expect(errorOf(r.body)).toMatchObject({ type: 'invalid_request_error', code: 'method_not_allowed' });
      expect(errorOf(r.body).message).toContain(`${method} ${path}`);
    }
  });

  it('Fastify routes: every method the path has, HEAD with GET; a parametric path too; no key needed to learn it', async () => {
    const models = await rawRequest(gateway.url, 'POST', '/v1/models', { 'content-type': 'application/json' }, '{}');
    expect(models.status).toBe(405);
    expect(models.headers.allow).toBe('GET, HEAD');
    const response = await rawRequest(gateway.url, 'PUT', '/v1/responses/resp_123', auth());
    expect(response.status).toBe(405);
    expect(String(response.headers.allow).split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(isEnvelope(response.body)).toBe(true);
  });

  it('an unknown path stays 404, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'OPTIONS']) {
      const r = await rawRequest(gateway.url, method, '/v1/no-such-route', auth());
      expect(r.status).toBe(404);
      expect(r.headers.allow).toBeUndefined();
      expect(errorOf(r.body).code).toBe('not_found');
    }
  });
});

describe('CORS: off by default, an explicit allowlist turns it on', () => {
  const preflight = (target: GatewayProcess, origin: string, requestHeaders = 'authorization, content-type, x-stainless-os, openai-organization') =>
    rawRequest(target.url, 'OPTIONS', '/v1/chat/completions', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders });

  it('an allowed origin: the preflight is answered 204 with methods, the SDKs’ headers and a max-age', async () => {
    const r = await preflight(gateway, ALLOWED, 'Authorization, Content-Type, X-Stainless-OS, X-Stainless-Retry-Count, OpenAI-Organization, OpenAI-Beta, Idempotency-Key');
    expect(r.status).toBe(204);
    expect(r.body).toBe('');
    expect(r.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(r.headers['access-control-allow-methods']).toBe('POST');
    expect(String(r.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)).toEqual([
      'authorization',
      'content-type',
      'x-stainless-os',
      'x-stainless-retry-count',
      'openai-organization',
      'openai-beta',
      'idempotency-key',
    ]);
    expect(Number(r.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(r.headers.vary).toMatch(/\borigin\b/i);
    // Bearer keys, never cookies: credentials are not allowed.
    expect(r.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('another origin, or CORS not configured: the preflight is refused, with no CORS header', async () => {
    for (const [target, origin] of [
      [gateway, 'https://evil.example'],
      [gateway, 'https://app.example.com.evil.example'],
      [closed, ALLOWED],
    ] as const) {
      const r = await preflight(target, origin);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });

  it('a preflight, answered ahead of the routes, writes its access line and counts in the HTTP metric', async () => {
    const count = async (statusClass: string) =>
      sampleValue(await scrapeMetrics(metricsUrl), 'drael_gateway_http_request_duration_seconds_count', { route: 'cors_preflight', method: 'OPTIONS', status_class: statusClass });
    const [ok0, refused0] = [await count('2xx'), await count('4xx')];
    const answered = await preflight(gateway, ALLOWED);
    const refused = await preflight(gateway, ALLOWED, 'x-secret-admin');
    expect([answered.status, refused.status]).toEqual([204, 403]);
    expect([(await count('2xx')) - ok0, (await count('4xx')) - refused0]).toEqual([1, 1]);
    // The access line names the answer's own request id (the log is flushed in batches).
    for (const r of [answered, refused]) {
      const line = `"request_id":${JSON.stringify(r.headers['x-request-id'])},"method":"OPTIONS","url":"/v1/chat/completions","status":${r.status}`;
      for (let i = 0; i < 50 && !gateway.output().includes(line); i++) await new Promise((res) => setTimeout(res, 100));
      expect(gateway.output()).toContain(line);
    }
  });

  it('a header outside the allowlist fails the preflight', async () => {
    const r = await preflight(gateway, ALLOWED, 'authorization, x-secret-admin');
    expect(r.status).toBe(403);
    expect(isEnvelope(r.body)).toBe(true);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('actual answers carry the origin and Vary: JSON, an SSE stream, an error, a hot and a Fastify route', async () => {
    const headers = { ...auth(), origin: ALLOWED, 'content-type': 'application/json', 'x-drael-server-tools': '0' };
    const json = await rawRequest(gateway.url, 'POST', '/v1/chat/completions', headers, JSON.stringify({ model: 'gpt-test', messages: HELLO }));
    const sse = await rawRequest(gateway.url, 'POST', '/v1/chat/completions', headers, JSON.stringify({ model: 'gpt-test', messages: HELLO, stream: true }));
    const denied = await rawRequest(gateway.url, 'POST', '/v1/chat/completions', { origin: ALLOWED, 'content-type': 'application/json' }, '{}');
    const models = await rawRequest(gateway.url, 'GET', '/v1/models', { ...auth(), origin: ALLOWED });
    expect([json.status, sse.status, denied.status, models.status]).toEqual([200, 200, 401, 200]);
    expect(sse.headers['content-type']).toMatch(/text\/event-stream/);
    for (const r of [json, sse, denied, models]) {
      expect(r.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(r.headers.vary).toMatch(/\borigin\b/i);
      // A browser app reads the request id and the rate limits only when they are exposed.
      expect(String(r.headers['access-control-expose-headers'])).toMatch(/x-request-id/);
    }
  });

  it('no CORS header for an origin outside the list, nor from a gateway without the setting', async () => {
    const other = await rawRequest(gateway.url, 'GET', '/v1/models', { ...auth(), origin: 'https://evil.example' });
    const off = await rawRequest(closed.url, 'GET', '/v1/models', { ...auth(), origin: ALLOWED });
    for (const r of [other, off]) {
      expect(r.status).toBe(200);
      expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });
});

describe('a JSON body in a charset other than UTF-8: 415 naming it', () => {
  const body = JSON.stringify({ model: 'gpt-test', messages: HELLO });
  const postAs = (path: string, contentType: string) => rawRequest(gateway.url, 'POST', path, { ...auth(), 'content-type': contentType, 'x-drael-server-tools': '0' }, body);

  it('refused on the hot route and on Fastify’s (a query string takes the request there)', async () => {
    for (const [path, contentType, named] of [
      ['/v1/chat/completions', 'application/json; charset=utf-16', 'utf-16'],
      ['/v1/chat/completions', 'application/json;charset="ISO-8859-1"', 'iso-8859-1'],
      ['/v1/chat/completions?x=1', 'application/json; CHARSET=utf-16le', 'utf-16le'],
      ['/v1/embeddings', 'application/json; charset=latin1', 'latin1'],
    ] as const) {
      const before = upstream.requests.length;
      const r = await postAs(path, contentType);
      expect(r.status, contentType).toBe(415);
      expect(errorOf(r.body)).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_charset' });
      expect(String(errorOf(r.body).message).toLowerCase()).toContain(named);
      expect(upstream.requests.length).toBe(before);
    }
  });

  it('utf-8 (any case, quoted) and no charset are served', async () => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json;Charset=Utf-8']) {
      expect((await postAs('/v1/chat/completions', contentType)).status, contentType).toBe(200);
      expect((await postAs('/v1/chat/completions?x=1', contentType)).status, contentType).toBe(200);
    }
  });
});

describe('proxy mode: the upstream reads what the gateway validated', () => {
  const tools = JSON.stringify(TOOLS);
  const messages = JSON.stringify(HELLO);
  const send = (raw: string, path = '/v1/chat/completions') => rawRequest(gateway.url, 'POST', path, { ...auth(), 'content-type': 'application/json' }, raw);
  const lastUpstreamBody = () => upstream.requests.at(-1)!.rawBody;

  it('a duplicate key: the upstream gets one `model`, the one routed', async () => {
    const r = await send(`{"model":"gpt-test","messages":${messages},"tools":${tools},"model":"same-name"}`);
    expect(r.status).toBe(200);
    const sent = lastUpstreamBody();
    expect(sent.match(/"model"/g)).toHaveLength(1);
    expect(JSON.parse(sent).model).toBe('same-name');
    expect(sent).not.toContain('gpt-test');
  });

  it('an escaped key (`mod\\u0065l`, `str\\u0065am`): re-encoded, so a parser that reads keys as bytes sees what was validated', async () => {
    const r = await send(`{"model":"gpt-test","messages":${messages},"tools":${tools},"mod\\u0065l":"same-name","stream":true,"str\\u0065am":false}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    const sent = lastUpstreamBody();
    expect(sent).not.toContain('\\u0065');
    expect(sent.match(/"stream"/g)).toHaveLength(1);
    expect(JSON.parse(sent)).toMatchObject({ model: 'same-name', stream: false });
  });

  it('a body without tricks is still forwarded byte for byte', async () => {
    const raw = `{ "model" : "same-name", "messages":${messages}, "tools":${tools}, "x_vendor": "caf\\u00e9" }`;
    expect((await send(raw)).status).toBe(200);
    expect(lastUpstreamBody()).toBe(raw);
  });

  it('bytes that are not UTF-8 are a 400 before anything is forwarded: the gateway would check U+FFFD while the upstream read the bytes', async () => {
    const head = Buffer.from(`{"model":"same-name","messages":[{"role":"user","content":"`);
    const tail = Buffer.from(`"}],"tools":${tools}}`);
    // A lone continuation byte, an overlong "/" (C0 AF), a UTF-16 surrogate encoded in UTF-8 (ED A0 80), a truncated sequence.
    for (const bad of [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      const body = Buffer.concat([head, Buffer.from(bad), tail]);
      for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
        const before = upstream.requests.length;
        const r = await rawRequest(gateway.url, 'POST', path, { ...auth(), 'content-type': 'application/json' }, body);
        expect(r.status, `${path} ${bad.join(',')}`).toBe(400);
        expect(errorOf(r.body)).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
        expect(String(errorOf(r.body).message)).toContain('UTF-8');
        expect(upstream.requests.length).toBe(before);
      }
    }
    // The same body with the character spelled in UTF-8 is served.
    expect(
      (await rawRequest(gateway.url, 'POST', '/v1/chat/completions', { ...auth(), 'content-type': 'application/json' }, Buffer.concat([head, Buffer.from('é€😀'), tail]))).status,
    ).toBe(200);
  });

  it('a key that only differs in case from a field (Go’s encoding/json, Ollama’s, matches it) is a 400 naming it', async () => {
    for (const [extra, param] of [
      ['"Model":"gpt-test"', 'Model'],
      ['"STREAM":true', 'STREAM'],
      ['"Tools":[]', 'Tools'],
      // U+017F folds to "s" in Go's case folding.
      ['"\u017Ftream":true', '\u017Ftream'],
    ] as const) {
      const before = upstream.requests.length;
      const r = await send(`{"model":"same-name","messages":${messages},"tools":${tools},${extra}}`);
      expect(r.status, extra).toBe(400);
      expect(errorOf(r.body)).toMatchObject({ code: 'invalid_request', param });
      expect(upstream.requests.length).toBe(before);
    }
  });

  it('embeddings: a duplicate model is re-encoded too', async () => {
    const r = await send('{"model":"gpt-test","input":"hello","model":"same-name"}', '/v1/embeddings');
    expect(r.status).toBe(200);
    const sent = lastUpstreamBody();
    expect(sent.match(/"model"/g)).toHaveLength(1);
    expect(JSON.parse(sent).model).toBe('same-name');
  });
});

describe('catalogue mode: what of the client’s request reaches each upstream turn', () => {
  it('user goes on; store and metadata do not (several hidden turns would each be stored upstream)', async () => {
    const before = upstream.requests.length;
    const r = await rawRequest(
      gateway.url,
      'POST',
      '/v1/chat/completions',
      { ...auth(), 'content-type': 'application/json' },
      JSON.stringify({ model: 'gpt-test', messages: HELLO, user: 'user-7', store: true, metadata: { team: 'a' } }),
    );
    expect(r.status).toBe(200);
    const sent = upstream.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    for (const s of sent) {
      expect(s.body.user).toBe('user-7');
      expect(s.body).not.toHaveProperty('store');
      expect(s.body).not.toHaveProperty('metadata');
    }
  });
});
