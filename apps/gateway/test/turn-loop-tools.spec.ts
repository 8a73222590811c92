import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { promisify } from 'node:util';
/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busySandboxContainers } from '@drael/test-support';
import { requestWorkspaces, startLoopHarness, toolMessages, toolNames, type LoopHarness } from './turn-loop.support.js';

// The tools against the REAL search service (Debian searx with the fixture engines) and the REAL
// sandbox (Docker), through the gateway process. fetch is not started: web_fetch must be absent.
const exec = promisify(execFile);
let h: LoopHarness;
const ask = [{ role: 'user', content: 'Work it out.' }];
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

beforeAll(async () => {
  // A session of 32 MiB (the default is 256): room for every upload here, and the test that fills
  // a session to its last byte writes (and saves) an eighth of what it would.
  h = await startLoopHarness({ services: ['search', 'sandbox'], serviceEnv: { sandbox: { SANDBOX_SESSION_QUOTA_MB: '32' } } });
}, 240_000);
afterAll(async () => {
  await h?.close();
}, 60_000);

/** One tool round: the script calls `calls`, then answers; returns the tool results the model got. */
async function round(calls: ReturnType<typeof call>[], headers: Record<string, string> = {}) {
  h.script([
    { type: 'tool_calls', calls },
    { type: 'text', content: 'done' },
  ]);
  const before = h.upstream.requests.length;
  const r = await h.chat({ messages: ask }, headers);
  expect(r.status).toBe(200);
  await r.json();
  const seen = h.upstream.requests.slice(before);
  expect(seen).toHaveLength(2);
  return { results: toolMessages(seen[1]!.body) };
}

/** The tools the upstream was offered for one plain request. */
async function offered(headers: Record<string, string> = {}): Promise<string[]> {
  h.script([{ type: 'text', content: 'hi' }]);
  const before = h.upstream.requests.length;
  const r = await h.chat({ messages: ask }, headers);
  expect(r.status).toBe(200);
  await r.json();
  return toolNames(h.upstream.requests[before]!.body);
}

describe('served catalogue with real services', () => {
  it('serves the tools whose service answers; unwired ones are absent from what the upstream received', async () => {
    expect(await offered()).toEqual(['run_code', 'web_search', 'spawn_agent']);
  });

  it('a key at l1_http is not served run_code', async () => {
    const key = await h.newKey({ tool_level: 'l1_http' });
    expect(await offered({ authorization: `Bearer ${key.api_key}` })).toEqual(['web_search', 'spawn_agent']);
  });
});

describe('web_search and run_code in one turn', () => {
  it('runs the calls in parallel and answers in call order: found, empty (found:false + note), code', async () => {
    const { results } = await round([
      call('s-found', 'web_search', { query: 'drael' }),
      call('s-empty', 'web_search', { query: 'zzempty nothing matches this' }),
      call('code', 'run_code', { runtime: 'python', code: 'print(6*7)' }),
    ]);
    expect(results.map((r) => r.tool_call_id)).toEqual(['s-found', 's-empty', 'code']);
    const [found, empty, code] = results.map((r) => r.content);
    expect(found).toMatchObject({ ok: true, found: true });
    expect(found.results.map((x: any) => x.url)).toContain('http://127.0.0.1:8891/pages/drael-architecture');
    expect(empty).toMatchObject({ ok: true, found: false });
    expect(empty.note).toMatch(/queried/);
    expect(code).toMatchObject({ ok: true, exit_code: 0, stdout: '42\n', stderr: '', timed_out: false, truncated: { stdout: false, stderr: false } });
    expect(typeof code.duration_s).toBe('number');
  });

  it('a search whose engines all fail is ok:false with the reason, never an empty result', async () => {
    // On its own: the failing corpus must not race the other queries of a turn.
    const { results } = await round([call('s-fail', 'web_search', { query: 'drael zzfail-all' })]);
    const fail = results[0]!.content;
    expect(fail.ok).toBe(false);
    expect(fail.found).toBeUndefined();
    expect(typeof fail.why).toBe('string');
    expect(fail.why.length).toBeGreaterThan(0);
  });

  it('run_code: at most 8 KiB of each stream, the cut stated in the text and in truncated; a failure says why', async () => {
    const { results } = await round([
      call('big', 'run_code', { runtime: 'python', code: 'print("x" * 20000)' }),
      call('bad', 'run_code', { runtime: 'bash', code: 'echo oops >&2; exit 3' }),
    ]);
    const [big, bad] = results.map((r) => r.content);
    expect(Buffer.byteLength(big.stdout)).toBeLessThanOrEqual(8192);
    expect(big.stdout).toMatch(/\[cut: the first 8192 of 20001 bytes are shown/);
    expect(big.truncated.stdout).toBe(true);
    expect(bad).toMatchObject({ ok: false, exit_code: 3, stderr: 'oops\n' });
    expect(bad.why).toMatch(/exited with code 3/);
  });
});

describe('sessions', () => {
  const files = (session: string, path = '', apiKey = h.apiKey, init: RequestInit = {}) =>
    fetch(`${h.gateway.url}/v1/sessions/${session}/files${path ? `/${path}` : ''}`, { ...init, headers: { authorization: `Bearer ${apiKey}`, ...(init.headers ?? {}) } });

  it('files brought in are seen by run_code, results are taken out, and they persist across requests', async () => {
    const session = `s${Date.now()}`;
    const put = await files(session, 'in/data.txt', h.apiKey, { method: 'PUT', body: 'hello from the client', headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ path: 'in/data.txt', size: 21 });

    const first = await round([call('r1', 'run_code', { runtime: 'bash', code: 'tr a-z A-Z < in/data.txt > out.txt && cat out.txt' })], { 'x-drael-session': session });
    expect(first.results[0]!.content).toMatchObject({ ok: true, stdout: 'HELLO FROM THE CLIENT' });

    // A later request on the same session sees what the first one wrote.
    const second = await round([call('r2', 'run_code', { runtime: 'bash', code: 'cat out.txt' })], { 'x-drael-session': session });
    expect(second.results[0]!.content).toMatchObject({ ok: true, stdout: 'HELLO FROM THE CLIENT' });

    const got = await files(session, 'out.txt');
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('HELLO FROM THE CLIENT');
    const listing = (await (await files(session)).json()) as any;
    expect(listing.object).toBe('list');
    expect(listing.data.map((f: any) => f.path).sort()).toEqual(['in/data.txt', 'out.txt']);

    const del = await files(session, 'out.txt', h.apiKey, { method: 'DELETE' });
    expect(((await del.json()) as any).deleted).toBe(true);
    expect((await files(session, 'out.txt')).status).toBe(404);
  });

  it('the same session id is a different workspace for another account', async () => {
    const session = `shared${Date.now()}`;
    expect((await files(session, 'secret.txt', h.apiKey, { method: 'PUT', body: 'mine', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    const other = await h.newKey();
    expect((await files(session, 'secret.txt', other.api_key)).status).toBe(404);
    const theirs = await round([call('peek', 'run_code', { runtime: 'bash', code: 'cat secret.txt' })], {
      authorization: `Bearer ${other.api_key}`,
      'x-drael-session': session,
    });
    expect(theirs.results[0]!.content).toMatchObject({ ok: false });
    expect(theirs.results[0]!.content.stdout).toBe('');
  });

  it("DELETE /v1/sessions/{id} deletes the whole session of the key's own account, never another account's of the same id", async () => {
    const session = `gone${Date.now()}`;
    const other = await h.newKey();
    for (const key of [h.apiKey, other.api_key]) {
      const put = await files(session, 'keep.txt', key, { method: 'PUT', body: key.slice(-6), headers: { 'content-type': 'text/plain' } });
      expect(put.status).toBe(200);
    }
    const drop = (apiKey: string, id = session) => fetch(`${h.gateway.url}/v1/sessions/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${apiKey}` } });

    const first = await drop(other.api_key);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ id: session, object: 'session', deleted: true });
    expect((await files(session, 'keep.txt', other.api_key)).status).toBe(404);
    // The first account's session of the same id is untouched.
    const mine = await files(session, 'keep.txt');
    expect(mine.status).toBe(200);
    expect(await mine.text()).toBe(h.apiKey.slice(-6));

    expect(await (await drop(other.api_key)).json()).toMatchObject({ deleted: false });
    const bad = await drop(h.apiKey, 'no%20spaces');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ code: 'invalid_session', param: 'id' });
    const unauthenticated = await fetch(`${h.gateway.url}/v1/sessions/${session}`, { method: 'DELETE' });
    expect(unauthenticated.status).toBe(401);
  });

  it('uploads larger than one NATS message arrive whole; one over BODY_LIMIT_BYTES is 413', async () => {
    const session = `big${Date.now()}`;
    const bytes = randomBytes(3 * 1024 * 1024 + 123);
    const put = await files(session, 'data.bin', h.apiKey, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ path: 'data.bin', size: bytes.length });
    const got = await files(session, 'data.bin');
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    const seen = await round([call('sz', 'run_code', { runtime: 'bash', code: 'printf %s "$(wc -c < data.bin)"' })], { 'x-drael-session': session });
    expect(seen.results[0]!.content).toMatchObject({ ok: true, stdout: `${bytes.length}` });

    // The gateway answers from the declared length, before the body: the client sees the answer
    // while it is still sending (fetch() would report that as EPIPE), so this asks with node:http.
    const tooBig = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${h.gateway.url}/v1/sessions/${session}/files/huge.bin`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${h.apiKey}`, 'content-type': 'application/octet-stream', 'content-length': String(32 * 1024 * 1024 + 1) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      });
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
      req.write(Buffer.alloc(64 * 1024));
    });
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body).error).toMatchObject({ type: 'invalid_request_error' });
    expect((await files(session, 'huge.bin')).status).toBe(404);
  });

  it('an upload that does not fit in the session is refused before anything is written: the file it would replace is kept', { timeout: 120_000 }, async () => {
    const session = `full${Date.now()}`;
    const first = randomBytes(1024 * 1024);
    expect((await files(session, 'data.bin', h.apiKey, { method: 'PUT', body: first, headers: { 'content-type': 'application/octet-stream' } })).status).toBe(200);
    // Fill the session to its last byte, then free 3 MiB: less room than the upload needs, even
    // counting the file it replaces, but more than its first pieces (a check that let it start
    // would leave neither the old file nor the new one).
    const fill = await round([call('fill', 'run_code', { runtime: 'bash', code: 'head -c 40M /dev/zero > fill 2>/dev/null; truncate -s -3M fill && echo filled' })], {
      'x-drael-session': session,
    });
    expect(fill.results[0]!.content).toMatchObject({ ok: true, stdout: 'filled\n' });
    const listing = (await (await files(session)).json()) as any;
    expect(listing.free_bytes).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    expect(listing.free_bytes).toBeLessThan(5 * 1024 * 1024);

    const refused = await files(session, 'data.bin', h.apiKey, { method: 'PUT', body: randomBytes(8 * 1024 * 1024), headers: { 'content-type': 'application/octet-stream' } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error).toMatchObject({ code: 'quota_exceeded', type: 'insufficient_quota' });
    const kept = await files(session, 'data.bin');
    expect(Buffer.from(await kept.arrayBuffer()).equals(first)).toBe(true);
  });

  it('without a session header nothing a run writes is readable by a later request', async () => {
    await round([call('w', 'run_code', { runtime: 'bash', code: 'echo left > note.txt' })]);
    const later = await round([call('r', 'run_code', { runtime: 'bash', code: 'cat note.txt' })]);
    expect(later.results[0]!.content).toMatchObject({ ok: false });
  });

  it("without a session header the request's runs share one workspace across turns, another request running meanwhile cannot see it, and it is gone when the request ends", {
    timeout: 180_000,
  }, async () => {
    const instance = h.sandboxInstance!;
    // Both requests share the one script, in the order the upstream is asked.
    h.script([
      // request A, turn 1: two parallel calls write the workspace (created at the first of them)
      {
        type: 'tool_calls',
        calls: [call('w1', 'run_code', { runtime: 'bash', code: 'echo one > a.txt' }), call('w2', 'run_code', { runtime: 'python', code: 'open("b.txt","w").write("two\\n")' })],
      },
      // request A, turn 2: reads them back once the test says so (below), after request B has come
      // and gone meanwhile. The wait is the test's signal, not a guessed sleep.
      { type: 'tool_calls', calls: [call('r', 'run_code', { runtime: 'bash', code: 'until [ -e /tmp/go ]; do sleep 0.1; done; cat a.txt b.txt', timeout_s: 120 })] },
      // request B (same account, no header), turn 1 and 2
      { type: 'tool_calls', calls: [call('peek', 'run_code', { runtime: 'bash', code: 'ls -A; cat a.txt' })] },
      { type: 'text', content: 'B done' },
      // request A, turn 3
      { type: 'text', content: 'A done' },
    ]);
    const before = h.upstream.requests.length;
    const a = h.chat({ messages: ask });
    await expect.poll(() => h.upstream.requests.length, { timeout: 60_000, interval: 100 }).toBe(before + 2);
    // Request A's workspace exists while it runs (earlier tests' ones are gone by now).
    await expect.poll(() => requestWorkspaces(instance), { timeout: 15_000, interval: 200 }).toHaveLength(1);
    const b = await h.chat({ messages: ask });
    expect(b.status).toBe(200);
    expect(((await b.json()) as any).choices[0].message.content).toBe('B done');
    const peek = toolMessages(h.upstream.requests[before + 3]!.body)[0]!.content;
    expect(peek).toMatchObject({ ok: false, stdout: '' });
    expect(peek.stderr).toContain('No such file');
    // B's own workspace is already gone; A's is still there.
    await expect.poll(() => requestWorkspaces(instance), { timeout: 15_000, interval: 200 }).toHaveLength(1);
    // A's run is the one container running something: let it read its files now.
    await expect.poll(() => busySandboxContainers(instance), { timeout: 30_000, interval: 250 }).toHaveLength(1);
    const [running] = await busySandboxContainers(instance);
    await exec('docker', ['exec', running!, 'touch', '/tmp/go']);

    const ra = await a;
    expect(ra.status).toBe(200);
    expect(((await ra.json()) as any).choices[0].message.content).toBe('A done');
    const last = toolMessages(h.upstream.requests[before + 4]!.body);
    expect(last.map((m) => m.tool_call_id)).toEqual(['w1', 'w2', 'r']);
    expect(last[2]!.content).toMatchObject({ ok: true, stdout: 'one\ntwo\n' });
    await expect.poll(() => requestWorkspaces(instance), { timeout: 15_000, interval: 200 }).toEqual([]);
  });

  it("a sub-agent works in its parent request's workspace", { timeout: 120_000 }, async () => {
    h.script([
      { type: 'tool_calls', calls: [call('w', 'run_code', { runtime: 'bash', code: 'echo from-parent > p.txt' })] },
      { type: 'tool_calls', calls: [call('sub', 'spawn_agent', { role: 'analyst', task: 'Read p.txt' })] },
      // the child: one run, then its answer
      { type: 'tool_calls', calls: [call('c', 'run_code', { runtime: 'bash', code: 'cat p.txt; echo from-child > c.txt' })] },
      { type: 'text', content: 'child saw it' },
      // the parent again
      { type: 'tool_calls', calls: [call('r', 'run_code', { runtime: 'bash', code: 'cat c.txt' })] },
      { type: 'text', content: 'done' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    expect(r.status).toBe(200);
    await r.json();
    expect(toolMessages(h.upstream.requests[before + 3]!.body)[0]!.content).toMatchObject({ ok: true, stdout: 'from-parent\n' });
    expect(toolMessages(h.upstream.requests[before + 5]!.body).at(-1)!.content).toMatchObject({ ok: true, stdout: 'from-child\n' });
    await expect.poll(() => requestWorkspaces(h.sandboxInstance!), { timeout: 15_000, interval: 200 }).toEqual([]);
  });

  it('a request that fails after a run still has its workspace deleted', async () => {
    h.script([
      { type: 'tool_calls', calls: [call('w', 'run_code', { runtime: 'bash', code: 'echo x > f.txt' })] },
      { type: 'error', status: 500, message: 'upstream broke' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    expect(r.status).toBeGreaterThanOrEqual(500);
    await r.text();
    // The run did happen (so the workspace existed) before the upstream failed.
    expect(toolMessages(h.upstream.requests[before + 1]!.body)[0]!.content).toMatchObject({ ok: true, exit_code: 0 });
    await expect.poll(() => requestWorkspaces(h.sandboxInstance!), { timeout: 15_000, interval: 200 }).toEqual([]);
  });
});

describe('client disconnect mid-loop', () => {
  it('kills the running sandbox and starts no further model turn', async () => {
    h.script([
      { type: 'tool_calls', content: 'Running it. ', calls: [call('long', 'run_code', { runtime: 'bash', code: 'sleep 60; echo finished' })] },
      { type: 'text', content: 'never asked' },
    ]);
    const before = h.upstream.requests.length;
    const instance = h.sandboxInstance!;
    const ac = new AbortController();
    const r = await h.chat({ messages: ask, stream: true }, {}, ac.signal);
    const reader = r.body!.getReader();
    let seen = '';
    while (!seen.includes('Running it.')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended early');
      seen += new TextDecoder().decode(value);
    }
    await expect.poll(() => busySandboxContainers(instance), { timeout: 30_000, interval: 250 }).toHaveLength(1);
    await expect.poll(() => requestWorkspaces(instance), { timeout: 15_000, interval: 250 }).toHaveLength(1);
    ac.abort();
    await expect.poll(() => busySandboxContainers(instance), { timeout: 15_000, interval: 250 }).toHaveLength(0);
    expect(h.upstream.requests.length).toBe(before + 1);
    // The request's own workspace goes with it.
    await expect.poll(() => requestWorkspaces(instance), { timeout: 15_000, interval: 250 }).toEqual([]);
  });
});
