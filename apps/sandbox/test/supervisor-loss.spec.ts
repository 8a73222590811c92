import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containersOf, exec, startSandbox, type Sandbox } from './sandbox-harness.js';

/*
 * A run's time limit holds even when the service that started it dies mid-run (a crash, an OOM
 * kill): the container's own launcher ends the program a few seconds after the run's timeout,
 * where before it went on using its CPU (and network, if allowed) until that replica came back to
 * clean up after itself, which a replica scaled away never does. (The prepared containers stay,
 * idle: only their launcher, waiting for a line, until a replica of the instance boots and
 * removes them.)
 */
let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox();
});
afterAll(async () => {
  await sbx?.stop();
});

/** The processes of each of the instance's running containers (a container gone in between has none). */
async function processesPerContainer(): Promise<number[]> {
  const counts: number[] = [];
  for (const id of await containersOf(sbx.instance, 'running')) {
    const top = await exec('docker', ['top', id, '-eo', 'pid']).then(
      (r) => r.stdout.trim().split('\n').length - 1,
      () => 0,
    );
    if (top > 0) counts.push(top);
  }
  return counts;
}

describe('the service killed while a run is in progress', () => {
  it("leaves nothing of the run running past the run's limit", async () => {
    const running = sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo started; while :; do :; done', timeout_s: 2 }).catch((e: unknown) => e);
    // The busy loop is running (a container with more than its launcher) when the service goes.
    await expect.poll(async () => Math.max(0, ...(await processesPerContainer())), { timeout: 20_000, interval: 100 }).toBeGreaterThan(1);
    await new Promise((r) => setTimeout(r, 1_000));
    sbx.proc.child.kill('SIGKILL');
    await running;
    // 2 s of run, the launcher's few seconds of grace, the engine's own pace: only idle launchers are left.
    await expect.poll(processesPerContainer, { timeout: 45_000, interval: 500 }).toSatisfy((counts: number[]) => counts.every((n) => n === 1));
  }, 90_000);
});
