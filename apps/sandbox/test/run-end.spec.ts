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

  it("a program that reads the end mark in the launcher's memory and prints it does not outlive its answer", async () => {
    // The attack: the launcher (pid 1) runs as the program's uid, so its memory is readable
    // (/proc/1/mem); the program prints the mark with status 0, which answers the run at once
    // (its own output and status are its own to fake), then tries to go on running past the answer.
    const code = [
      'import re, sys, time',
      'found = None',
      "mem = open('/proc/1/mem', 'rb')",
      "for line in open('/proc/1/maps').read().splitlines():",
      '    fields = line.split()',
      "    if 'rw' not in fields[1]: continue",
      "    lo, hi = (int(x, 16) for x in fields[0].split('-'))",
      '    try:',
      '        mem.seek(lo); data = mem.read(hi - lo)',
      '    except OSError: continue',
      "    m = re.search(rb'drael-end-[0-9a-f]{32}', data)",
      '    if m: found = m.group(0).decode(); break',
      "print('found' if found else 'not found', flush=True)",
      'if found:',
      "    print(found + ' 0', flush=True)",
      "    print(found + ' 0', file=sys.stderr, flush=True)",
      'time.sleep(4)',
      "open('/work/outlived', 'w').write('the run went on after its answer')",
    ].join('\n');
    const r = await sbx.run({ tenant: 'acme', session: 'forged_end', runtime: 'python', code });
    // Without the mark found the attack proves nothing.
    expect(r).toMatchObject({ ok: true, exit_code: 0, stdout: 'found\n' });
    // Its container goes right after the answer: nothing of it is left to write, then or later.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(await sbx.run({ tenant: 'acme', session: 'forged_end', runtime: 'bash', code: 'ls -A /work' })).toMatchObject({ ok: true, stdout: '' });
  });

  it('a program that never ends is still stopped by its timeout', async () => {
    expect(await sbx.run({ tenant: 'acme', runtime: 'bash', code: 'echo started; sleep 60', timeout_s: 1 })).toMatchObject({ ok: false, timed_out: true, stdout: 'started\n' });
  });
});
