import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { startLoopHarness, type LoopHarness } from './turn-loop.support.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

/** /v1/sessions against a real sandbox and billing: uploads stored verbatim, the account's sessions listed. */
let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({ services: ['sandbox'] });
}, 180_000);
afterAll(async () => {
  await h?.close();
});

const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

describe('PUT /v1/sessions/{id}/files/{path}', () => {
  it('stores the raw bytes whatever the Content-Type says: .jsonl, empty, partial JSON, JSON, binary, none', async () => {
    const session = `raw${Date.now()}`;
    const cases: Array<{ path: string; type?: string; body: Buffer }> = [
      { path: 'data.jsonl', type: 'application/json', body: Buffer.from('{"a":1}\n{"b":2}\n') },
      { path: 'empty.json', type: 'application/json', body: Buffer.alloc(0) },
      { path: 'partial.json', type: 'application/json; charset=utf-8', body: Buffer.from('{"unfinished": [1, 2') },
      { path: 'whole.json', type: 'application/json', body: Buffer.from('{"kept":"as sent",  "spacing": true}') },
      { path: 'vendor.json', type: 'application/vnd.api+json', body: Buffer.from('not json at all') },
      { path: 'bin.dat', type: 'image/png', body: Buffer.from([0, 255, 1, 254, 0x89, 0x50, 0x4e, 0x47]) },
      { path: 'untyped.txt', body: Buffer.from('no content type') },
      { path: 'nothing', body: Buffer.alloc(0) },
    ];
    for (const c of cases) {
      const put = await fetch(`${h.gateway.url}/v1/sessions/${session}/files/${c.path}`, {
        method: 'PUT',
        headers: { ...auth(h.apiKey), ...(c.type ? { 'content-type': c.type } : {}) },
        body: c.body,
      });
      expect(put.status, `${c.path}: ${await put.clone().text()}`).toBe(200);
      expect(await put.json()).toMatchObject({ path: c.path, size: c.body.length });
      const got = await fetch(`${h.gateway.url}/v1/sessions/${session}/files/${c.path}`, { headers: auth(h.apiKey) });
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(c.body), c.path).toBe(true);
    }
    // The listing names them all, and says so (a listing names at most 2,000).
    const listing = (await (await fetch(`${h.gateway.url}/v1/sessions/${session}/files`, { headers: auth(h.apiKey) })).json()) as { data: { path: string }[]; has_more: boolean };
    expect(listing.data.map((f) => f.path).sort()).toEqual(cases.map((c) => c.path).sort());
    expect(listing.has_more).toBe(false);
  });

  it('other routes still take JSON only', async () => {
    const r = await fetch(`${h.gateway.url}/v1/responses`, { method: 'POST', headers: { ...auth(h.apiKey), 'content-type': 'text/plain' }, body: 'hi' });
    expect(r.status).toBe(415);
  });
});

describe('GET /v1/sessions', () => {
  it("lists the account's sessions (id, bytes, last use), paginated like OpenAI lists, never another account's", async () => {
    const mine = await h.newKey();
    const theirs = await h.newKey();
    const put = (apiKey: string, session: string, body: string) =>
      fetch(`${h.gateway.url}/v1/sessions/${session}/files/f.txt`, { method: 'PUT', headers: { ...auth(apiKey), 'content-type': 'text/plain' }, body });
    const ids = ['l-one', 'l-two', 'l-three'];
    for (const id of ids) expect((await put(mine.api_key, id, id.repeat(100))).status).toBe(200);
    expect((await put(theirs.api_key, 'l-two', 'same id, other account')).status).toBe(200);
    expect((await put(theirs.api_key, 'their-own', 'x')).status).toBe(200);

    const list = async (apiKey: string, query = '') => {
      const r = await fetch(`${h.gateway.url}/v1/sessions${query}`, { headers: auth(apiKey) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const all = await list(mine.api_key);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', first_id: 'l-three', last_id: 'l-one', has_more: false });
    // What the account holds and may hold: its sessions, and its saved bytes (each file's, once).
    expect(all.body).toMatchObject({ total: 3, stored_bytes: ids.reduce((n, id) => n + id.length * 100, 0) });
    expect(all.body.max_sessions).toBeGreaterThanOrEqual(3);
    expect(all.body.max_stored_bytes).toBeGreaterThan(all.body.stored_bytes);
    expect(all.body.data.map((s: any) => s.id)).toEqual(['l-three', 'l-two', 'l-one']);
    for (const s of all.body.data) {
      expect(s).toMatchObject({ object: 'session' });
      expect(s.bytes).toBeGreaterThan(0);
      expect(Number.isInteger(s.last_used_at) && Number.isInteger(s.created_at)).toBe(true);
      expect(Math.abs(s.last_used_at - Date.now() / 1000)).toBeLessThan(600);
    }

    const page1 = await list(mine.api_key, '?limit=2');
    expect(page1.body).toMatchObject({ first_id: 'l-three', last_id: 'l-two', has_more: true });
    const page2 = await list(mine.api_key, `?limit=2&after=${page1.body.last_id}`);
    expect(page2.body).toMatchObject({ first_id: 'l-one', last_id: 'l-one', has_more: false });
    expect(page2.body.data.map((s: any) => s.id)).toEqual(['l-one']);
    const asc = await list(mine.api_key, '?order=asc&limit=1');
    expect(asc.body).toMatchObject({ first_id: 'l-one', has_more: true });

    const other = await list(theirs.api_key);
    expect(other.body.data.map((s: any) => s.id).sort()).toEqual(['l-two', 'their-own']);
    expect(other.body).toMatchObject({ total: 2, stored_bytes: 'same id, other account'.length + 1 });
    // Another account's session id is no cursor here: refused, not an empty page.
    const foreign = await list(mine.api_key, '?after=their-own');
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({ type: 'invalid_request_error', param: 'after' });

    const empty = await list((await h.newKey()).api_key);
    expect(empty.body).toEqual({
      object: 'list',
      data: [],
      first_id: null,
      last_id: null,
      has_more: false,
      total: 0,
      max_sessions: all.body.max_sessions,
      stored_bytes: 0,
      max_stored_bytes: all.body.max_stored_bytes,
    });

    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=abc', 'limit'],
      ['?order=sideways', 'order'],
      ['?after=no%20spaces', 'after'],
    ] as const) {
      const bad = await list(mine.api_key, query);
      expect(bad.status, query).toBe(400);
      expect(bad.body.error.param, query).toBe(param);
    }
    expect((await fetch(`${h.gateway.url}/v1/sessions`)).status).toBe(401);
  });
});

describe("a key's tool level decides what it may do with the account's sessions", () => {
  it('a none key is refused everything (403 tool_not_allowed); an l1_http key lists, reads and deletes but never writes; what code left is unchanged', async () => {
    const owner = await h.newKey({ tool_level: 'l3_shell' });
    const keyAt = async (tool_level: 'none' | 'l1_http') =>
      (await h.nats.request(billingCatalog.createKey, { account_id: owner.account_id, tool_level, rate_limit: { per_minute: 1_000_000, per_hour: 10_000_000 } })).api_key;
    const [none, reader] = [await keyAt('none'), await keyAt('l1_http')];
    const file = `${h.gateway.url}/v1/sessions/shared/files/result.txt`;
    const call = (apiKey: string, url: string, init: RequestInit = {}) =>
      fetch(url, { ...init, headers: { ...auth(apiKey), ...(init.body !== undefined ? { 'content-type': 'text/plain' } : {}) } });
    expect((await call(owner.api_key, file, { method: 'PUT', body: 'secret-output' })).status).toBe(200);

    const refused = async (apiKey: string, url: string, init?: RequestInit) => {
      const r = await call(apiKey, url, init);
      expect(r.status, `${init?.method ?? 'GET'} ${url}`).toBe(403);
      expect(((await r.json()) as any).error.code).toBe('tool_not_allowed');
    };
    for (const [url, init] of [
      [`${h.gateway.url}/v1/sessions`, undefined],
      [`${h.gateway.url}/v1/sessions/shared/files`, undefined],
      [file, undefined],
      [file, { method: 'PUT', body: 'planted' }],
      [`${h.gateway.url}/v1/sessions/its-own/files/x.txt`, { method: 'PUT', body: 'takes a place' }],
      [file, { method: 'DELETE' }],
      [`${h.gateway.url}/v1/sessions/shared`, { method: 'DELETE' }],
    ] as const) {
      await refused(none, url, init);
    }

    expect(((await (await call(reader, `${h.gateway.url}/v1/sessions`)).json()) as any).data.map((s: any) => s.id)).toEqual(['shared']);
    expect(await (await call(reader, file)).text()).toBe('secret-output');
    await refused(reader, file, { method: 'PUT', body: 'planted' });
    await refused(reader, `${h.gateway.url}/v1/sessions/its-own/files/x.txt`, { method: 'PUT', body: 'x' });

    // Nothing the refused keys sent landed: the file is as the code's key left it, and no session was made.
    expect(await (await call(owner.api_key, file)).text()).toBe('secret-output');
    expect(((await (await call(owner.api_key, `${h.gateway.url}/v1/sessions`)).json()) as any).data.map((s: any) => s.id)).toEqual(['shared']);
  });
});

describe('file names and downloads (attack pass 4, F7 and F9)', () => {
  it('a new file whose name holds a bidirectional or control character is refused 400 invalid_path; nothing is written', async () => {
    const owner = await h.newKey();
    for (const name of ['invoice%E2%80%AEfdp.exe', 'a%E2%81%A6b.txt', 'line%0Abreak.txt']) {
      const r = await fetch(`${h.gateway.url}/v1/sessions/names/files/${name}`, { method: 'PUT', headers: { ...auth(owner.api_key), 'content-type': 'text/plain' }, body: 'x' });
      expect(r.status, name).toBe(400);
      expect(((await r.json()) as any).error).toMatchObject({ code: 'invalid_path', param: 'path' });
    }
    expect(((await (await fetch(`${h.gateway.url}/v1/sessions`, { headers: auth(owner.api_key) })).json()) as any).data).toEqual([]);
  });

  it('a download is an attachment named as the file, never sniffed or cached', async () => {
    const owner = await h.newKey();
    const url = `${h.gateway.url}/v1/sessions/dl/files/out/r%C3%A9sum%C3%A9%20%22final%22.html`;
    expect((await fetch(url, { method: 'PUT', headers: { ...auth(owner.api_key), 'content-type': 'text/html' }, body: '<script>alert(1)</script>' })).status).toBe(200);
    const r = await fetch(url, { headers: auth(owner.api_key) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="r_sum_ _final_.html"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.html`);
    expect(await r.text()).toBe('<script>alert(1)</script>');
  });
});
