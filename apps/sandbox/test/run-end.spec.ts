import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from './sandbox-harness.js';

/*
 * Issue 20: a run's answer comes once its launcher says the program has ended (its end marks on
 * stdout and stderr), not once the engine reports the container's exit. What a run returns must
 * not change: the program's output only (never the marks), its exit code, its streams apart.
 */
let sbx: Sandbox;
beforeAll(async () => {
  sbx = await startSandbox({ SANDBOX_WARM_POOL: '1' });
});
afterAll(async () => {
  await sbx?.stop();
});

describe("a run's end", () => {
  it("returns exactly what the program wrote, without a final newline too, and none of the launcher's marks", async () => {
    expect(await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'printf out; printf err >&2' })).toMatchObject({ ok: true, exit_code: 0, stdout: 'out', stderr: 'err' });
    expect(await sbx.run({ tenant: 'acme', session: 'end_ws', runtime: 'python', code: 'import sys\nprint("a")\nprint("b", file=sys.stderr)' })).toMatchObject({
      ok: true,
      exit_code: 0,
      stdout: 'a\n',
      stderr: 'b\n',
    });
  });

  it('a failed program keeps its exit code and output', async () => {
    expect(await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo x; echo y >&2; exit 3' })).toMatchObject({
      ok: false,
      exit_code: 3,
      stdout: 'x\n',
      stderr: 'y\n',
      timed_out: false,
    });
  });

  it('a process the program left running is ended with the run, and its later output is not in the answer', async () => {
    const r = await sbx.run({ tenant: 'acme', runtime: 'bash', code: '(sleep 1; echo late) & echo early' });
    expect(r).toMatchObject({ ok: true, exit_code: 0, stdout: 'early\n', stderr: '' });
  });

  it('a program that never ends is still stopped by its timeout', async () => {
    expect(await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo started; sleep 60', timeout_s: 1 })).toMatchObject({ ok: false, timed_out: true, stdout: 'started\n' });
  });
});
