import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containersOf, startSandbox, type Sandbox } from './sandbox-harness.js';

/*
 * A run's time limit holds even when the service that started it dies mid-run (a crash, an OOM
 * kill): the container's own launcher ends the program a few seconds after the run's timeout,
 * where before it went on using its CPU (and network, if allowed) until that replica came back to
 * clean up after itself, which a replica scaled away never does. The prepared containers end too:
 * their stdin (the attach stream) closes with the service.
 */
let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox();
});
afterAll(async () => {
  await sbx?.stop();
});

describe('the service killed while a run is in progress', () => {
  it("leaves no container running past the run's limit", async () => {
    const running = sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo started; while :; do :; done', timeout_s: 2 }).catch((e: unknown) => e);
    // The busy loop is running in its container when the service goes.
    await expect.poll(async () => (await containersOf(sbx.instance, 'running')).length, { timeout: 20_000, interval: 100 }).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1_000));
    sbx.proc.child.kill('SIGKILL');
    await running;
    // 2 s of run, the launcher's few seconds of grace, the engine's own pace: nothing is left running.
    await expect.poll(() => containersOf(sbx.instance, 'running'), { timeout: 45_000, interval: 500 }).toEqual([]);
  }, 90_000);
});
