import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { b64, placementKeyOf, placementKv, startSandbox, type Sandbox } from './sandbox-harness.js';

let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_SESSION_QUOTA_MB: '8', SANDBOX_MAX_SESSIONS_PER_TENANT: '7' });
});
afterAll(async () => {
  await sbx?.stop();
});

const list = (tenant: string, page: { after?: string; limit?: number; order?: 'asc' | 'desc' } = {}) => sbx.call(sandboxCatalog.sessionsList, { tenant, ...page });

describe('sandbox.sessions.list.v1', () => {
  it("lists a tenant's sessions with their size and last use, paginated newest first, and never another tenant's", async () => {
    const made: string[] = [];
    for (const id of ['s-a', 's-b', 's-c', 's-d', 's-e']) {
      await sbx.call(sandboxCatalog.filesWrite, { tenant: 'lister', session: id, path: 'f.txt', content_base64: b64(id.repeat(1000)) });
      made.push(id);
    }
    // Another tenant's sessions, one of them under an id the first tenant also uses.
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'other', session: 's-a', path: 'x', content_base64: b64('x') });
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'other', session: 'theirs', path: 'x', content_base64: b64('x') });
    // A request's own workspace is no session: never listed.
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'lister', session: 'req_abc', scope: 'request', path: 'x', content_base64: b64('x') });

    const all = await list('lister', { limit: 100 });
    expect(all.sessions.map((s) => s.id)).toEqual([...made].reverse());
    expect(all).toMatchObject({ has_more: false, total: 5, max_sessions: 7 });
    const now = Date.now() / 1000;
    for (const s of all.sessions) {
      expect(s.bytes).toBeGreaterThan(0);
      expect(Math.abs(s.last_used_at - now)).toBeLessThan(600);
      expect(s.created_at).toBeLessThanOrEqual(s.last_used_at);
    }

    const first = await list('lister', { limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual(['s-e', 's-d']);
    expect(first.has_more).toBe(true);
    const second = await list('lister', { limit: 2, after: 's-d' });
    expect(second.sessions.map((s) => s.id)).toEqual(['s-c', 's-b']);
    expect(second.has_more).toBe(true);
    const last = await list('lister', { limit: 2, after: 's-b' });
    expect(last.sessions.map((s) => s.id)).toEqual(['s-a']);
    expect(last.has_more).toBe(false);
    const ascending = await list('lister', { limit: 3, order: 'asc' });
    expect(ascending.sessions.map((s) => s.id)).toEqual(['s-a', 's-b', 's-c']);

    expect((await list('other')).sessions.map((s) => s.id).sort()).toEqual(['s-a', 'theirs']);
    expect(await list('nobody')).toMatchObject({ sessions: [], has_more: false, total: 0 });
    // A cursor the tenant does not hold (here another tenant's session) is refused, not an empty page.
    const bad = await sbx.errorOf(sandboxCatalog.sessionsList, { tenant: 'lister', after: 'theirs' });
    expect(bad).toMatchObject({ code: 'bad_request', details: { param: 'after' } });
    expect(bad.message).not.toMatch(/sandbox\.|\.v1/);
  });

  it('a deleted session leaves the list; a session made before placement records existed is listed again at its next use', async () => {
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'del', session: 'keep', path: 'a', content_base64: b64('a') });
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'del', session: 'drop', path: 'a', content_base64: b64('a') });
    await sbx.call(sandboxCatalog.workspaceDelete, { tenant: 'del', session: 'drop' });
    expect((await list('del')).sessions.map((s) => s.id)).toEqual(['keep']);

    // Remove its placement record and its record on disk, as a volume made by an older
    // (single-replica) sandbox would have neither.
    const { kv, nc } = await placementKv(sbx.prefix);
    await kv.delete(placementKeyOf('del', 'keep'));
    await nc.close();
    await rm(diskRecordOf(sbx, 'del', 'keep'));
    expect((await list('del')).sessions).toEqual([]);
    // A new process finds the volume on its disk at the session's next use and records it.
    await sbx.proc.stop('SIGKILL');
    await sbx.restart();
    await sbx.call(sandboxCatalog.filesList, { tenant: 'del', session: 'keep' });
    expect((await list('del')).sessions.map((s) => s.id)).toEqual(['keep']);
  });

  it('a deleted session or request workspace leaves nothing in the placement stream (the KV delete left a marker per key for good); the id can be used again', async () => {
    const { nc, messagesOf } = await placementKv(sbx.prefix);
    try {
      const made: [{ tenant: string; session: string; scope?: 'request' }, string][] = [
        [{ tenant: 'gone', session: 'once' }, placementKeyOf('gone', 'once')],
        [{ tenant: 'gone', session: 'req_once', scope: 'request' }, placementKeyOf('gone', 'req_once', 'request')],
      ];
      for (const [scope, key] of made) {
        await sbx.call(sandboxCatalog.filesWrite, { ...scope, path: 'a', content_base64: b64('a') });
        expect(await messagesOf(key)).toBe(1);
        await sbx.call(sandboxCatalog.workspaceDelete, scope);
        await expect.poll(() => messagesOf(key), { timeout: 10_000 }).toBe(0);
      }
      // Made again under the same id: a new, empty session, listed.
      const session = { tenant: 'gone', session: 'once' };
      await sbx.call(sandboxCatalog.filesWrite, { ...session, path: 'b', content_base64: b64('b') });
      expect((await sbx.call(sandboxCatalog.filesList, session)).files.map((f) => f.path)).toEqual(['b']);
      expect((await list('gone')).sessions.map((s) => s.id)).toEqual(['once']);
    } finally {
      await nc.close();
    }
  });

  it('the refusal at the per-tenant cap names the HTTP routes that list and free sessions, never a NATS subject (it reaches API clients as is)', async () => {
    for (let i = 0; i < 7; i++) await sbx.call(sandboxCatalog.filesWrite, { tenant: 'cap', session: `c${i}`, path: 'a', content_base64: b64('a') });
    const refused = await sbx.errorOf(sandboxCatalog.filesWrite, { tenant: 'cap', session: 'one-more', path: 'a', content_base64: b64('a') });
    expect(refused.code).toBe('session_limit_reached');
    expect(refused.message).toContain('GET /v1/sessions');
    expect(refused.message).toContain('DELETE /v1/sessions/{id}');
    expect(refused.message).not.toMatch(/\.v\d\b|sandbox\.[a-z]/);
    expect((await list('cap')).total).toBe(7);
  });

  it("a session's bytes follow what its files take", async () => {
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'size', session: 'grow', path: 'small', content_base64: b64('x') });
    const before = (await list('size')).sessions[0]!.bytes;
    await sbx.call(sandboxCatalog.filesWrite, { tenant: 'size', session: 'grow', path: 'big', content_base64: Buffer.alloc(400 * 1024, 7).toString('base64') });
    const after = (await list('size')).sessions[0]!.bytes;
    expect(after - before).toBeGreaterThanOrEqual(400 * 1024);
  });
});

/** The record beside a session's volume on disk (WorkspaceService.locate: hashes only). */
function diskRecordOf(s: Sandbox, tenant: string, session: string): string {
  const hash = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 40);
  return join(s.stateDir, 'sessions', hash(`tenant\0${tenant}`), `${hash(`session\0${tenant}\0${session}`)}.json`);
}
