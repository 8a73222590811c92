import { afterAll, describe, expect, it } from 'vitest';
import { sandboxCatalog } from '@drael/contracts';
import { containersOf, startSandbox, type Sandbox } from './sandbox-harness.js';

const started: Sandbox[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

describe('concurrency and lifecycle', () => {
  it('runs beyond the slots and the queue are refused with the retryable sandbox_busy', { timeout: 120_000 }, async () => {
    const sbx = await startSandbox({ SANDBOX_MAX_CONCURRENT: '1', SANDBOX_MAX_QUEUE: '1' });
    started.push(sbx);
    const slow = { tenant: 'busy', runtime: 'bash' as const, code: 'sleep 2; echo done', timeout_s: 20 };
    const first = sbx.run(slow);
    // Let the first take the slot before the others arrive.
    await new Promise((r) => setTimeout(r, 300));
    const second = sbx.run(slow);
    await new Promise((r) => setTimeout(r, 300));
    const third = await sbx.errorOf(sandboxCatalog.run, slow);
    expect(third).toMatchObject({ code: 'sandbox_busy', retryable: true });
    expect(await first).toMatchObject({ ok: true, stdout: 'done\n' });
    // The queued run gets the slot when the first one finishes.
    expect(await second).toMatchObject({ ok: true, stdout: 'done\n' });
    expect(await sbx.run({ ...slow, code: 'echo again' })).toMatchObject({ ok: true, stdout: 'again\n' });
  });

  it('a run with a run_id can be cancelled by its own tenant only; the container is killed', { timeout: 120_000 }, async () => {
    const sbx = await startSandbox({ SANDBOX_WARM_POOL: '0' });
    started.push(sbx);
    const run = sbx.run({ tenant: 'owner', run_id: 'job-1', runtime: 'bash', code: 'echo started; sleep 100', timeout_s: 200 });
    let running: string[] = [];
    for (let i = 0; i < 200 && running.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      running = await containersOf(sbx.instance, 'running');
    }
    expect(running).toHaveLength(1);
    // Another tenant naming the same run id stops nothing.
    expect(await sbx.call(sandboxCatalog.runCancel, { tenant: 'intruder', run_id: 'job-1' })).toEqual({ run_id: 'job-1', cancelled: false });
    expect(await containersOf(sbx.instance, 'running')).toEqual(running);
    expect(await sbx.call(sandboxCatalog.runCancel, { tenant: 'owner', run_id: 'job-1' })).toEqual({ run_id: 'job-1', cancelled: true });
    expect(await run).toMatchObject({ ok: false, exit_code: 137, timed_out: false, stdout: 'started\n' });
    expect(await containersOf(sbx.instance)).toEqual([]);
    expect(await sbx.call(sandboxCatalog.runCancel, { tenant: 'owner', run_id: 'job-1' })).toEqual({ run_id: 'job-1', cancelled: false });
  });

  it('a service killed mid-run leaves a container that the next start removes; the session stays usable', { timeout: 120_000 }, async () => {
    const sbx = await startSandbox({ SANDBOX_WARM_POOL: '0' });
    started.push(sbx);
    const scope = { tenant: 'restart', session: 's1' };
    await sbx.run({ ...scope, runtime: 'bash', code: 'echo before > kept.txt' });
    const pending = sbx.run({ ...scope, runtime: 'bash', code: 'sleep 120', timeout_s: 200 }).catch((e: unknown) => e);
    let running: string[] = [];
    for (let i = 0; i < 100 && running.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      running = await containersOf(sbx.instance, 'running');
    }
    expect(running).toHaveLength(1);
    await sbx.proc.stop('SIGKILL');
    // Nobody is left to remove it: the container outlives the service.
    expect(await containersOf(sbx.instance, 'running')).toEqual(running);
    await sbx.restart();
    expect(await containersOf(sbx.instance)).toEqual([]);
    // The session's volume was left mounted by the killed process; the new one recovers it.
    expect(await sbx.run({ ...scope, runtime: 'bash', code: 'cat kept.txt' })).toMatchObject({ ok: true, stdout: 'before\n' });
    void pending;
  });
});
