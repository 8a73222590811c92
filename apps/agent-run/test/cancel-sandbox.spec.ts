import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxFor, startStack, type Stack, type StackSandbox } from './harness.js';

const exec = promisify(execFile);
let stack: Stack;
let sandbox: StackSandbox;

/** The containers of this test's sandbox that are running now (no warm pool: only runs). */
async function runningContainers(): Promise<string[]> {
  const { stdout } = await exec('docker', ['ps', '-q', '--no-trunc', '--filter', `label=drael.sandbox.instance=${sandbox.instance}`, '--filter', 'status=running']);
  return stdout.split('\n').filter(Boolean);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  stack = await startStack();
  sandbox = await startSandboxFor(stack, 'arc', { SANDBOX_WARM_POOL: '0' });
}, 240_000);

afterAll(async () => {
  await sandbox?.stop();
  await stack?.stop();
});

describe('cancelling a run whose sandbox execution is in flight', { timeout: 180_000 }, () => {
  it('answers cancelling at once, kills the container, ends cancelled with run.status events, and charges nothing for the killed execution', async () => {
    const acct = await stack.account();
    // The program would run until the sandbox's 30 s limit: only a kill ends it sooner.
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'sleep', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'import time\ntime.sleep(120)' }) }] },
      { type: 'text', content: 'never' },
    ]);
    const agent = await stack.createAgent(acct, { tools: ['sandbox.execute'] });
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'sleep' });
    await waitFor('the sandbox container starts', async () => (await runningContainers()).length > 0, 90_000);

    const answer = await stack.call('cancelRun', { account_id: acct, run_id: created.id });
    expect(answer.status).toBe('cancelling');
    // Well inside the 30 s the container would otherwise live.
    await waitFor('the container is killed', async () => (await runningContainers()).length === 0, 15_000);
    const run = await stack.waitForRun(acct, created.id);
    expect(run).toMatchObject({ status: 'cancelled', step_count: 1, receipt_count: 1 });
    const { events } = await stack.call('runEvents', { account_id: acct, run_id: run.id, after: 0, wait_ms: 0 });
    expect(events.filter((e) => e.type === 'run.status').map((e) => e.data.status)).toEqual(['queued', 'running', 'cancelling', 'cancelled']);
    expect(events.at(-1)).toMatchObject({ type: 'run.done', data: { status: 'cancelled' } });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
  });
});
