import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '@drael/test-support';
import { NATS_URL, startStack, type Stack } from './harness.js';

const exec = promisify(execFile);
let stack: Stack;
let sandbox: ServiceProcess;
let instance: string;
let stateDir: string;

beforeAll(async () => {
  stack = await startStack();
  instance = `test-ar-${stack.prefix.slice(3)}`;
  stateDir = `/var/lib/drael/sandbox-test/${instance}`;
  // The real sandbox service (Docker) on the stack's NATS prefix, with a label and state dir of its own.
  sandbox = await startServiceProcess(
    'sandbox',
    { NATS_URL, DRAEL_NATS_PREFIX: stack.prefix, SANDBOX_INSTANCE: instance, SANDBOX_STATE_DIR: stateDir, SANDBOX_MAX_CONCURRENT: '2', SANDBOX_WARM_POOL: '1', LOG_LEVEL: 'warn' },
    { readyTimeoutMs: 90_000 },
  );
}, 240_000);

afterAll(async () => {
  await sandbox?.stop('SIGKILL');
  if (instance) {
    const { stdout } = await exec('docker', ['ps', '-aq', '--no-trunc', '--filter', `label=drael.sandbox.instance=${instance}`]).catch(() => ({ stdout: '' }));
    const ids = stdout.split('\n').filter(Boolean);
    if (ids.length) await exec('docker', ['rm', '-f', ...ids]).catch(() => undefined);
    const mounts = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').map((l) => l.split(' ')[4]).filter((m): m is string => !!m && m.startsWith(`${stateDir}/`));
    for (const m of mounts) await exec('umount', ['-l', m]).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
  }
  await stack?.stop();
});

describe('sandbox_execute through the real sandbox service', { timeout: 120_000 }, () => {
  it('runs the code, returns status, exit code and output to the model, and bills a receipted step', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'py', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'import sys\nprint(6*7)\nprint("warn", file=sys.stderr)' }) }] },
      { type: 'tool_calls', calls: [{ id: 'js', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'node', code: 'console.log("x".repeat(9000)); process.exit(3)' }) }] },
      { type: 'text', content: 'the answer is 42' },
    ]);
    const agent = await stack.createAgent(acct, { tools: ['sandbox.execute'] });
    const start = stack.upstream.requests.length;
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'compute 6*7' })).id, 120_000);
    expect(run).toMatchObject({ status: 'succeeded', output: 'the answer is 42', receipt_count: 5 });

    const reqs = stack.upstream.requests.slice(start);
    const py = JSON.parse(reqs[1]!.body.messages.at(-1).content as string) as Record<string, unknown>;
    expect(py).toEqual({ status: 'ok', exit_code: 0, stdout: '42\n', stderr: 'warn\n' });
    const js = JSON.parse(reqs[2]!.body.messages.at(-1).content as string) as { status: string; exit_code: number; stdout: string };
    // A failed execution is a tool result for the model, not the end of the run; stdout cut at 8,000 characters.
    expect(js).toMatchObject({ status: 'error', exit_code: 3 });
    expect(js.stdout).toHaveLength(8_000);

    const { receipts } = await stack.call('listReceipts', { account_id: acct, run_id: run.id });
    expect(receipts.map((r) => r.payload.kind)).toEqual(['inference.chat', 'sandbox.execute', 'inference.chat', 'sandbox.execute', 'inference.chat']);
    expect(receipts[1]!.payload.cost_micros).toBeGreaterThan(0);
    expect(JSON.stringify(receipts)).not.toContain('6*7');
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
  });
});
