/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers read by the assertions */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, testPrefix, type GatewayProcess } from '@drael/test-support';

// What the gateway adds for the console (issue 23): its static files at /console, the daily usage
// aggregation, and the operator's listings. Real gateway process, real billing.
const ADMIN = 'console-admin-token-0123456789abcdef';
// A browser origin allowed to call the gateway (http/cors.ts).
const ORIGIN = 'https://ops.example.com';
let g: GatewayProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'console-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1.js"></script>');
  writeFileSync(join(dir, 'assets', 'app-1.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, 'assets', 'notes.exe'), 'MZ');
  g = await startGatewayProcess(
    {
      NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
      DRAEL_NATS_PREFIX: testPrefix('console-api'),
      DRAEL_BACKEND_SERVICES: 'billing',
      DRAEL_ADMIN_TOKEN: ADMIN,
      DRAEL_CONSOLE_DIR: dir,
      CORS_ALLOWED_ORIGINS: ORIGIN,
      LOG_LEVEL: 'warn',
    },
    { readyTimeoutMs: 90_000, billing: { plan: 'pro' } },
  );
}, 180_000);
afterAll(async () => {
  await g?.stop();
}, 60_000);

const get = (path: string, headers: Record<string, string> = g.authHeaders) => fetch(`${g.url}${path}`, { headers });
const admin = { authorization: `Bearer ${ADMIN}` };

describe('GET /console (static, public)', () => {
  it('serves index.html and hashed assets without a key, gzipped on request, with the CSP and caching', async () => {
    const r = await get('/console/', {});
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await r.text()).toContain('<title>console</title>');
    const js = await fetch(`${g.url}/console/assets/app-1.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-encoding')).toBe('gzip');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = js.headers.get('etag')!;
    expect((await fetch(`${g.url}/console/assets/app-1.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(`${g.url}/console`, { redirect: 'manual' })).status).toBe(308);
  });

  it('a listed CORS origin’s answer varies on Origin and on Accept-Encoding, both named', async () => {
    const r = await get('/console/assets/app-1.js', { origin: ORIGIN, 'accept-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect((r.headers.get('vary') ?? '').toLowerCase().split(/,\s*/).sort()).toEqual(['accept-encoding', 'origin']);
    // Without an Origin, as before.
    expect((await get('/console/', {})).headers.get('vary')).toBe('accept-encoding');
  });

  it('never reaches outside its files: a traversal or an unknown type gets index.html or a 404 envelope', async () => {
    for (const p of ['/console/..%2f..%2fpackage.json', '/console/assets/..%2f..%2f..%2fpackage.json', '/console/..%5c..%5cpackage.json']) {
      const r = await get(p, {});
      expect([200, 404]).toContain(r.status);
      expect(await r.text()).not.toContain('@drael/');
    }
    // A route of the single-page app is its page.
    expect(await (await get('/console/agents/x', {})).text()).toContain('<title>console</title>');
    const exe = await get('/console/assets/notes.exe', {});
    expect(exe.status).toBe(404);
    expect(((await exe.json()) as any).error.code).toBe('not_found');
  });
});

describe('GET /api/billing/usage/daily', () => {
  it("answers the caller's last 30 days by default, or `days`; refuses a bad window naming the param; needs a key", async () => {
    const r = await get('/api/billing/usage/daily');
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(30);
    expect(body.data.at(-1).day).toBe(new Date().toISOString().slice(0, 10));
    expect(body.data[0]).toEqual({ day: expect.any(String), tool_calls: 0, units: { images: 0, lookups: 0 }, agent_steps: 0, spend_usd: 0, requests: 0 });
    expect(((await (await get('/api/billing/usage/daily?days=7')).json()) as any).data).toHaveLength(7);
    for (const bad of ['0', '91', 'abc']) {
      const e = await get(`/api/billing/usage/daily?days=${bad}`);
      expect(e.status).toBe(400);
      expect(((await e.json()) as any).error).toMatchObject({ code: 'invalid_request', param: 'days' });
    }
    expect((await get('/api/billing/usage/daily', {})).status).toBe(401);
  });
});

describe('operator listings (admin token)', () => {
  it('lists accounts and an account’s keys (hint only); an API key does not open them', async () => {
    const accounts = (await (await get('/admin/accounts?limit=100', admin)).json()) as any;
    expect(accounts.accounts.some((a: any) => a.account_id === g.key!.account_id)).toBe(true);
    const keys = (await (await get(`/admin/accounts/${g.key!.account_id}/keys`, admin)).json()) as any;
    expect(keys.keys.map((k: any) => k.key_id)).toEqual([g.key!.key_id]);
    expect(JSON.stringify(keys)).not.toContain(g.apiKey);
    expect((await get('/admin/accounts')).status).toBe(401);
    const bad = await get('/admin/accounts?limit=0', admin);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.param).toBe('limit');
  });

  it('credits a wallet once per Idempotency-Key; the same key with another amount is a 409', async () => {
    const post = (amount: number, key: string) =>
      fetch(`${g.url}/admin/accounts/${g.key!.account_id}/wallet/credit`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ amount_micros: amount }),
      });
    const first = (await (await post(250_000, 'console-credit-1')).json()) as any;
    const again = (await (await post(250_000, 'console-credit-1')).json()) as any;
    expect(again.balance_micros).toBe(first.balance_micros);
    const conflict = await post(999, 'console-credit-1');
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as any).error.code).toBe('idempotency_key_reused');
  });
});
