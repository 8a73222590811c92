import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { b64, placementKeyOf, placementKv, startSandbox, unb64, type Sandbox } from './sandbox-harness.js';

/*
 * Chaos runs 2 and 3 (bench/chaos/README.md): NATS restarted under a save, the replica's record
 * update timed out though NATS had applied it, so the replica no longer knew the record's revision
 * and took its own session back, restoring the saved copy onto a new volume. The container the
 * runtime had prepared for the session's next run was still bound to the replaced volume: that run
 * answered ok, but its changes were written where nothing saves or serves them.
 */
let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ SANDBOX_WARM_POOL: '1' });
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

describe('a replica that takes its own session back (its record changed under it)', () => {
  it("restores the saved copy and runs the next call on it: that call's changes are kept", async () => {
    const ws = { tenant: 'self', session: 'back' };
    await s.call(sandboxCatalog.filesWrite, { ...ws, path: 'log.txt', content_base64: b64('0\n') });
    expect(await s.run({ ...ws, runtime: 'bash', code: 'echo 1 >> log.txt; cat log.txt' })).toMatchObject({ ok: true, stdout: '0\n1\n' });
    // The runtime prepares the session's next container after a run, off the reply's path.
    await new Promise((r) => setTimeout(r, 2_000));

    // A revision this process did not write (as when its own update's answer was lost): the
    // record is the same, but the replica cannot trust its copy and takes the session back.
    const { kv, nc } = await placementKv(s.prefix);
    const key = placementKeyOf(ws.tenant, ws.session);
    await kv.put(key, (await kv.get(key))!.string());
    await nc.close();

    expect(await s.run({ ...ws, runtime: 'bash', code: 'echo 2 >> log.txt; cat log.txt' })).toMatchObject({ ok: true, stdout: '0\n1\n2\n' });
    const read = await s.call(sandboxCatalog.filesRead, { ...ws, path: 'log.txt' });
    expect(unb64(read.content_base64)).toBe('0\n1\n2\n');
    expect(await s.run({ ...ws, runtime: 'bash', code: 'cat log.txt' })).toMatchObject({ ok: true, stdout: '0\n1\n2\n' });
  }, 120_000);
});
