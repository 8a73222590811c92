import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { placementKeyOf, placementKv, startSandbox, type Sandbox } from './sandbox-harness.js';

// One tenant's saved workspaces are bounded on their own (SANDBOX_TENANT_STORE_MAX_MB), below what
// its sessions could hold (SANDBOX_MAX_SESSIONS_PER_TENANT × SANDBOX_SESSION_QUOTA_MB): the attack
// is a tenant opening session after session, each filled with incompressible bytes, until the
// shared session store is full for every other tenant (the multi-replica pass's F3).
let sbx: Sandbox;
const BLOB = 10_300_000; // two fit in the 20 MiB budget with 363 KiB to spare, three do not
const fill = `head -c ${BLOB} /dev/urandom > blob.bin; echo saved`;

beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_SESSION_QUOTA_MB: '32', SANDBOX_TENANT_STORE_MAX_MB: '20', SANDBOX_WARM_POOL: '0' });
}, 120_000);
afterAll(async () => {
  await sbx?.stop();
});

describe("a tenant's budget of saved bytes", () => {
  it("refuses the save that would take a tenant past it, counts its request workspaces too, never another tenant's, and always lets it free room", async () => {
    for (const session of ['x-0', 'x-1']) {
      expect(await sbx.run({ tenant: 'tenant-x', session, runtime: 'bash', code: fill })).toMatchObject({ ok: true, stdout: 'saved\n' });
    }
    // The record states what its saved copy takes: what the budget adds up, across replicas.
    const { kv, nc } = await placementKv(sbx.prefix);
    try {
      const record = JSON.parse((await kv.get(placementKeyOf('tenant-x', 'x-0')))!.string()) as { saved_bytes?: number };
      expect(record.saved_bytes).toBe(BLOB);
    } finally {
      await nc.close();
    }

    // The session listing says what the tenant stores and may store (every replica's records).
    expect(await sbx.call(sandboxCatalog.sessionsList, { tenant: 'tenant-x' })).toMatchObject({ total: 2, stored_bytes: 2 * BLOB, max_stored_bytes: 20 * 1024 * 1024 });

    // The third session's save would pass the budget: refused, typed, with what to do; the run
    // itself is answered (the program ran: its output is the caller's), its files not saved.
    const unsavedRun = await sbx.run({ tenant: 'tenant-x', session: 'x-2', runtime: 'bash', code: fill });
    expect(unsavedRun).toMatchObject({ ok: true, stdout: 'saved\n' });
    const refused = unsavedRun.unsaved!;
    expect(refused).toMatchObject({ code: 'quota_exceeded', retryable: false, details: { max_stored_bytes: 20 * 1024 * 1024 } });
    expect((refused.details as { stored_bytes: number }).stored_bytes).toBeGreaterThanOrEqual(2 * BLOB);
    expect(refused.message).toContain('saved workspaces');
    expect(refused.message).not.toMatch(/sandbox\.|\.v1/);
    // The record names no saved copy: nothing of x-2 went to the store.
    const { kv: kvx, nc: ncx } = await placementKv(sbx.prefix);
    try {
      expect((JSON.parse((await kvx.get(placementKeyOf('tenant-x', 'x-2')))!.string()) as { object?: string }).object).toBeUndefined();
    } finally {
      await ncx.close();
    }
    // A file written through the API is checked before it lands: refused, it is not there.
    const written = await sbx.errorOf(sandboxCatalog.filesWrite, {
      tenant: 'tenant-x',
      session: 'x-1',
      path: 'big.bin',
      content_base64: Buffer.alloc(500_000, 7).toString('base64'),
    });
    expect(written).toMatchObject({ code: 'quota_exceeded' });
    const listed = await sbx.call(sandboxCatalog.filesList, { tenant: 'tenant-x', session: 'x-1' });
    expect(listed.files.map((f) => f.path)).not.toContain('big.bin');
    // A request's own workspace is the tenant's too.
    const inRequest = await sbx.run({ tenant: 'tenant-x', session: 'req-x', scope: 'request', runtime: 'bash', code: fill });
    expect(inRequest).toMatchObject({ ok: true, unsaved: { code: 'quota_exceeded' } });
    // What does not grow the store is never refused: a run that writes nothing, a session-less run.
    const same = await sbx.run({ tenant: 'tenant-x', session: 'x-1', runtime: 'bash', code: 'echo same' });
    expect(same).toMatchObject({ ok: true, stdout: 'same\n' });
    expect(same.unsaved).toBeUndefined();
    expect(await sbx.run({ tenant: 'tenant-x', runtime: 'python', code: 'print(6*7)' })).toMatchObject({ ok: true, stdout: '42\n' });

    // Another tenant has a budget of its own.
    expect(await sbx.run({ tenant: 'tenant-y', session: 'y-0', runtime: 'bash', code: fill })).toMatchObject({ ok: true, stdout: 'saved\n' });

    // Freeing room always fits.
    expect(await sbx.call(sandboxCatalog.filesDelete, { tenant: 'tenant-x', session: 'x-0', path: 'blob.bin' })).toMatchObject({ deleted: true });
    // A request workspace's saved copy counts while it lives: with one filled, the refused
    // session's files still do not fit; once the request's workspace is deleted, they do.
    expect(await sbx.run({ tenant: 'tenant-x', session: 'req-x2', scope: 'request', runtime: 'bash', code: fill })).toMatchObject({ ok: true, stdout: 'saved\n' });
    expect(await sbx.run({ tenant: 'tenant-x', session: 'x-2', runtime: 'bash', code: 'true' })).toMatchObject({ ok: true, unsaved: { code: 'quota_exceeded' } });
    // Listed too: x-1's copy and the request's (x-0's file is gone); another tenant's is its own.
    expect(await sbx.call(sandboxCatalog.sessionsList, { tenant: 'tenant-x' })).toMatchObject({ stored_bytes: 2 * BLOB });
    expect(await sbx.call(sandboxCatalog.sessionsList, { tenant: 'tenant-y' })).toMatchObject({ total: 1, stored_bytes: BLOB });
    await sbx.call(sandboxCatalog.workspaceDelete, { tenant: 'tenant-x', session: 'req-x2', scope: 'request' });
    expect(await sbx.call(sandboxCatalog.sessionsList, { tenant: 'tenant-x' })).toMatchObject({ stored_bytes: BLOB });
    // The refused session's files, kept on the replica's disk, are saved by its next call once they fit.
    const fits = await sbx.run({ tenant: 'tenant-x', session: 'x-2', runtime: 'bash', code: 'stat -c %s blob.bin' });
    expect(fits).toMatchObject({ ok: true, stdout: `${BLOB}\n` });
    expect(fits.unsaved).toBeUndefined();
    const { kv: kv2, nc: nc2 } = await placementKv(sbx.prefix);
    try {
      const record = JSON.parse((await kv2.get(placementKeyOf('tenant-x', 'x-2')))!.string()) as { saved_bytes?: number; object?: string };
      expect(record).toMatchObject({ saved_bytes: BLOB });
      expect(record.object).toBeDefined();
    } finally {
      await nc2.close();
    }
    // Full again: x-1 and x-2.
    expect(await sbx.run({ tenant: 'tenant-x', session: 'x-0', runtime: 'bash', code: fill })).toMatchObject({ ok: true, unsaved: { code: 'quota_exceeded' } });
  }, 180_000);
});
