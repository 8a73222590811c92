import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { rewritePlacementRecord, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';

/*
 * Issue 20: a run without the network in a workspace this replica holds (or a new request's) runs
 * beside its placement's KV round trip, not after it (placement/session-router.ts). When the
 * placement then says the files on this disk are not the workspace's any more, that run is
 * dropped and the call answered as if it had waited: these runs see what they would have seen.
 */
let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_SESSION_QUOTA_MB: '16' });
});
afterAll(async () => {
  await sbx?.stop();
});

const readBack = 'cat kept.txt 2>/dev/null || echo none';

describe('a run beside its placement', () => {
  it('a session whose record was deleted elsewhere starts empty, though its files are still on this disk', async () => {
    const ws = { tenant: 'beside', session: 'deleted' };
    expect(await sbx.run({ ...ws, runtime: 'bash', code: 'echo old > kept.txt; echo ok' })).toMatchObject({ ok: true, stdout: 'ok\n' });
    expect((await sbx.run({ ...ws, runtime: 'bash', code: readBack })).stdout).toBe('old\n');
    // Deleted (or expired) by another replica: the session is gone everywhere.
    await rewritePlacementRecord(sbx.prefix, ws.tenant, ws.session, () => undefined);
    expect((await sbx.run({ ...ws, runtime: 'bash', code: readBack })).stdout).toBe('none\n');
    // The new session is this run's: its next run is answered from it.
    await sbx.run({ ...ws, runtime: 'bash', code: 'echo new > kept.txt' });
    expect((await sbx.run({ ...ws, runtime: 'bash', code: readBack })).stdout).toBe('new\n');
  });

  it("a session whose record changed under its holder is run on the record's saved copy, not on this disk's files", async () => {
    const ws = { tenant: 'beside', session: 'moved' };
    await sbx.run({ ...ws, runtime: 'bash', code: 'echo old > kept.txt' });
    // Rewritten as never saved (e.g. by a replica that took it over and gave it back): the saved
    // copy it names is empty, and that is what the next run must see.
    await rewritePlacementRecord(sbx.prefix, ws.tenant, ws.session, ({ object: _, ...rest }) => rest);
    expect((await sbx.run({ ...ws, runtime: 'bash', code: readBack })).stdout).toBe('none\n');
    const listed = await sbx.call(sandboxCatalog.filesList, { ...ws });
    expect(listed.files.map((f) => f.path)).toEqual([]);
  });

  it("a request's first run, claimed beside its run, keeps its files for the request's next run", async () => {
    const ws = { tenant: 'beside', session: 'req-1', scope: 'request' as const };
    await sbx.run({ ...ws, runtime: 'bash', code: 'echo first > kept.txt' });
    expect((await sbx.run({ ...ws, runtime: 'bash', code: readBack })).stdout).toBe('first\n');
    const read = await sbx.call(sandboxCatalog.filesRead, { ...ws, path: 'kept.txt' });
    expect(unb64(read.content_base64)).toBe('first\n');
  });
});
