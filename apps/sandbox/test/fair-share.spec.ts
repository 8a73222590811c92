import { afterAll, describe, expect, it } from 'vitest';
import { sandboxCatalog, type SandboxRunReply } from '@drael/contracts';
import { RpcError } from '@drael/nats-rpc';
import { containersOf, startSandbox, type Sandbox } from './sandbox-harness.js';

/*
 * Issue F8, as the attack made it: one chat request of one tenant sends many slow runs at once
 * (a model turn may carry 128 run_code calls, all run in parallel). It must not take the sandbox
 * from the other tenants, and the runs its caller gave up on must not run for nobody.
 */
const started: Sandbox[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

/** The run's answer, or the typed error it failed with, and when it came. */
async function outcomeOf(pending: Promise<SandboxRunReply>, since: number): Promise<{ reply?: SandboxRunReply; error?: RpcError; afterMs: number }> {
  try {
    const reply = await pending;
    return { reply, afterMs: Date.now() - since };
  } catch (err) {
    if (!(err instanceof RpcError)) throw err;
    return { error: err, afterMs: Date.now() - since };
  }
}

describe('fair share of the sandbox between tenants (F8)', () => {
  it("one tenant's flood of slow runs is refused past its share at once; another tenant's short run is answered meanwhile", { timeout: 180_000 }, async () => {
    // Two slots and the default queue of 32, as in the attack; the tenant shares are the defaults (1 running, 8 waiting).
    const sbx = await startSandbox({ SANDBOX_MAX_CONCURRENT: '2', SANDBOX_WARM_POOL: '0' });
    started.push(sbx);
    const t0 = Date.now();
    const flood = Array.from({ length: 20 }, (_, i) => outcomeOf(sbx.run({ tenant: 'flood', run_id: `flood-${i}`, runtime: 'bash', code: 'sleep 20', timeout_s: 25 }), t0));
    const settled: Array<{ error?: RpcError; afterMs: number }> = [];
    for (const p of flood) void p.then((o) => settled.push(o));
    // The runs past the tenant's share are refused quickly, with the retryable busy naming the share.
    await expect.poll(() => settled.filter((o) => o.error).length, { timeout: 15_000, interval: 250 }).toBe(20 - 1 - 8);
    const refused = settled.filter((o) => o.error);
    for (const r of refused) {
      expect(r.error).toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'tenant' } });
      expect(r.error?.message).toMatch(/this tenant's share/);
      expect(r.afterMs).toBeLessThan(10_000);
    }
    // The flood holds one slot, not both.
    await expect.poll(() => containersOf(sbx.instance, 'running'), { timeout: 20_000, interval: 250 }).toHaveLength(1);

    // Meanwhile another tenant's short run is answered, not queued behind the flood.
    const victimAt = Date.now();
    expect(await sbx.run({ tenant: 'victim', runtime: 'bash', code: 'echo victim-ok', timeout_s: 1 })).toMatchObject({ ok: true, stdout: 'victim-ok\n' });
    expect(Date.now() - victimAt).toBeLessThan(15_000);
    // A second victim, while the flood's queue still waits: served just as fast.
    expect(await sbx.run({ tenant: 'victim-2', runtime: 'bash', code: 'echo ok-2', timeout_s: 1 })).toMatchObject({ ok: true, stdout: 'ok-2\n' });
    expect(Date.now() - victimAt).toBeLessThan(25_000);

    // End the flood: its caller stops what it started and what waits.
    await Promise.all(Array.from({ length: 20 }, (_, i) => sbx.call(sandboxCatalog.runCancel, { tenant: 'flood', run_id: `flood-${i}` }).catch(() => undefined)));
    await Promise.all(flood);
  });

  it('a queued run whose caller no longer waits for the whole run never starts', { timeout: 180_000 }, async () => {
    const sbx = await startSandbox({ SANDBOX_MAX_CONCURRENT: '1', SANDBOX_WARM_POOL: '0' });
    started.push(sbx);
    // Another tenant holds the only slot for longer than the queued run's caller waits to see it start.
    const holder = sbx.run({ tenant: 'holder', runtime: 'bash', code: 'sleep 40; echo held', timeout_s: 60 });
    await expect.poll(() => containersOf(sbx.instance, 'running'), { timeout: 20_000, interval: 250 }).toHaveLength(1);

    // A 1 s run: its caller waits 31 s (sandbox.run.v1's timeoutFor). Asked here with more patience,
    // so that what the sandbox does with it is seen.
    const t0 = Date.now();
    const late = outcomeOf(
      sbx.client.request(sandboxCatalog.run, { tenant: 'late', session: 'probe', runtime: 'bash', code: 'echo ran > ran.txt', timeout_s: 1 }, { timeoutMs: 90_000 }),
      t0,
    );
    const o = await late;
    expect(o.error).toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'deadline' } });
    // Refused once a whole run would no longer be answered in time: 30 s after it arrived.
    expect(o.afterMs).toBeGreaterThan(25_000);
    expect(o.afterMs).toBeLessThan(36_000);

    expect(await holder).toMatchObject({ ok: true, stdout: 'held\n' });
    // The slot came free after its deadline: the run never started, and nothing of it is left.
    expect((await sbx.call(sandboxCatalog.filesList, { tenant: 'late', session: 'probe' })).files).toEqual([]);
    await expect.poll(() => containersOf(sbx.instance), { timeout: 20_000, interval: 250 }).toEqual([]);
  });
});
