import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxFor, startStack, type Stack, type StackSandbox } from './harness.js';

let stack: Stack;
let sandbox: StackSandbox;

beforeAll(async () => {
  stack = await startStack();
  sandbox = await startSandboxFor(stack, 'ar', { SANDBOX_WARM_POOL: '1' });
}, 240_000);

afterAll(async () => {
  await sandbox?.stop();
  await stack?.stop();
});

describe('sandbox_execute through the real sandbox service', { timeout: 120_000 }, () => {
  it('runs the code, returns status, exit code and output to the model, and bills a receipted step', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([
      {
        type: 'tool_calls',
        calls: [{ id: 'py', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'import sys\nprint(6*7)\nprint("warn", file=sys.stderr)' }) }],
      },
      {
        type: 'tool_calls',
        calls: [{ id: 'js', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'node', code: 'console.log("x".repeat(9000)); process.exit(3)' }) }],
      },
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
