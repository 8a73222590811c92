import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Receipt } from '@drael/contracts';
import { isRpcError } from '@drael/nats-rpc';
import { FieldCipher } from '../src/crypto/field-cipher.js';
import { ReceiptSigner } from '@drael/receipts';
import { verifyReceipts } from '../src/receipts/receipt-verifier.js';
import { account, startStack, type Stack } from './harness.js';

let stack: Stack;

beforeAll(async () => {
  // Sandbox at 100 µ$/s: a 30 s reservation costs 3,000 µ$.
  stack = await startStack({ workerEnv: { AGENT_RUN_SANDBOX_USD_PER_SECOND: '0.0001' } });
}, 120_000);
afterAll(async () => stack?.stop());

const text = (content: string, usage = { prompt_tokens: 50, completion_tokens: 10 }) => ({ type: 'text' as const, content, usage });

describe('runs through the real gateway inference subject', () => {
  it('runs a task to its output, with a verifiable receipt chain and the content encrypted at rest', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('The answer is quux.')]);
    const agent = await stack.createAgent(acct, { instructions: 'secret instructions xyzzy' });
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'secret task plugh' });
    expect(created.status).toBe('queued');

    const run = await stack.waitForRun(acct, created.id);
    expect(run).toMatchObject({ status: 'succeeded', output: 'The answer is quux.', step_count: 1, receipt_count: 1, error: null });
    // 50 input tokens at $1/M + 10 output tokens at $4/M = 90 µ$.
    expect(run.spent_usd).toBeCloseTo(0.00009, 10);

    // The model got the instructions and the task through the gateway, with a capped max_tokens.
    const req = stack.upstream.requests.at(-1)!;
    expect(req.body.messages).toEqual([
      { role: 'system', content: 'secret instructions xyzzy' },
      { role: 'user', content: 'secret task plugh' },
    ]);
    expect(req.body.max_tokens).toBeGreaterThanOrEqual(64);
    expect(req.body.tools[0].function.name).toBe('sandbox_execute');

    const bundle = await stack.call('listReceipts', { account_id: acct, run_id: run.id });
    expect(bundle.public_key).toBe(new ReceiptSigner(stack.receiptKey, 'k1').publicKey);
    expect(bundle.receipts[0]!.payload).toMatchObject({ kind: 'inference.chat', cost_micros: 90, run: { id: run.id, sequence: 0, previous_receipt_hash: null } });
    expect(bundle.run_end?.payload).toMatchObject({ run_id: run.id, receipt_count: 1, receipt_head: run.receipt_head });
    expect(bundle.keys).toEqual([{ key_id: 'k1', public_key: bundle.public_key, algorithm: 'ed25519' }]);
    expect(verifyReceipts(bundle, bundle.keys).valid).toBe(true);
    expect(await stack.call('verifyRun', { account_id: acct, run_id: run.id })).toMatchObject({ valid: true, receipt_count: 1 });
    // Receipts hold fingerprints, never content.
    expect(JSON.stringify(bundle)).not.toMatch(/plugh|xyzzy|quux/);

    const [row] = await stack.db.query<{ task: string; output: string }>('SELECT task, output FROM runs WHERE id = $1', [run.id]);
    const [agentRow] = await stack.db.query<{ instructions: string }>('SELECT instructions FROM agents WHERE id = $1', [agent.id]);
    expect(row!.task).toMatch(/^enc1:k1:/);
    expect(row!.output).toMatch(/^enc1:k1:/);
    // Words, not digits: base64url ciphertext holds any two-character string now and then, a four-letter word about once in a million runs
    // (a check for "42" failed once in CI on an honest ciphertext).
    expect(`${row!.task}${row!.output}${agentRow!.instructions}`).not.toMatch(/plugh|xyzzy|quux/);
  });

  it('detects a receipt changed in the database', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('done')]);
    const agent = await stack.createAgent(acct);
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 't' })).id);
    await stack.db.query(`UPDATE receipts SET payload = jsonb_set(payload, '{cost_micros}', '1') WHERE run_id = $1`, [run.id]);
    const result = await stack.call('verifyRun', { account_id: acct, run_id: run.id });
    expect(result.valid).toBe(false);
    expect(result.problems.join('\n')).toMatch(/receipt 0: hash does not match/);
  });

  it('fails to read a task whose ciphertext was moved to another run', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('a'), text('b')]);
    const agent = await stack.createAgent(acct);
    const r1 = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'task one' })).id);
    const r2 = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'task two' })).id);
    await stack.db.query('UPDATE runs SET task = (SELECT task FROM runs WHERE id = $1) WHERE id = $2', [r1.id, r2.id]);
    await expect(stack.call('getRun', { account_id: acct, run_id: r2.id })).rejects.toMatchObject({ code: 'internal' });
    expect((await stack.call('getRun', { account_id: acct, run_id: r1.id })).task).toBe('task one');
  });

  it('refuses a task of 0 and of 50,001 characters, accepts 50,000', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct, { limits: { step_limit: 1, budget_usd: 0.0001 } });
    for (const task of ['', 'x'.repeat(50_001)]) {
      const err = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task }).catch((e: unknown) => e);
      expect(isRpcError(err) && err.code).toBe('invalid_task');
    }
    const ok = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x'.repeat(50_000) });
    expect(ok.task.length).toBe(50_000);
    await stack.waitForRun(acct, ok.id);
  });

  it('keeps accounts apart: another account cannot see or run an agent', async () => {
    const a = await stack.account();
    const agent = await stack.createAgent(a);
    await expect(stack.call('getAgent', { account_id: account(), agent_id: agent.id })).rejects.toMatchObject({ code: 'agent_not_found' });
    await expect(stack.call('createRun', { account_id: account(), agent_id: agent.id, task: 'x' })).rejects.toMatchObject({ code: 'agent_not_found' });
  });

  it('refuses the model call when fewer than 64 output tokens are affordable (budget_exceeded, no call made)', async () => {
    const acct = await stack.account();
    const before = stack.upstream.requests.length;
    // 500 µ$ cannot pay the prompt's estimated input plus 64 tokens at 4 µ$ each.
    const agent = await stack.createAgent(acct, { limits: { step_limit: 5, budget_usd: 0.0005 } });
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'hello' })).id);
    expect(run).toMatchObject({ status: 'budget_exceeded', spent_usd: 0, receipt_count: 0 });
    expect(run.error?.message).toMatch(/64 output tokens/);
    expect(stack.upstream.requests.length).toBe(before);
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
  });

  it('caps max_tokens at what the remaining budget pays for', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('ok', { prompt_tokens: 10, completion_tokens: 5 })]);
    const agent = await stack.createAgent(acct, { tools: [], limits: { step_limit: 5, budget_usd: 0.003 } });
    await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'hello' })).id);
    const maxTokens = stack.upstream.requests.at(-1)!.body.max_tokens as number;
    expect(maxTokens).toBeGreaterThanOrEqual(64);
    // 3,000 µ$ minus the estimated input leaves fewer than 750 tokens at 4 µ$.
    expect(maxTokens).toBeLessThan(750);
  });

  it('refuses a sandbox execution whose full-timeout reservation exceeds the remainder', async () => {
    const acct = await stack.account();
    const before = stack.upstream.requests.length;
    stack.upstream.setTurns([
      {
        type: 'tool_calls',
        calls: [{ name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'print(1)' }) }],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
    ]);
    // 3,000 µ$: the model call costs 30 µ$, leaving 2,970 < the 3,000 µ$ reservation of 30 s.
    const agent = await stack.createAgent(acct, { limits: { step_limit: 5, budget_usd: 0.003 } });
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'compute' })).id);
    expect(run).toMatchObject({ status: 'budget_exceeded', receipt_count: 1 });
    expect(run.error?.message).toMatch(/30 s timeout/);
    expect(run.spent_usd).toBeLessThanOrEqual(run.budget_usd);
    expect(stack.upstream.requests.length).toBe(before + 1);
    const steps = await stack.call('listSteps', { account_id: acct, run_id: run.id });
    expect(steps.steps.map((s) => s.kind)).toEqual(['inference.chat']);
  });

  it('reports disallowed tools and invalid arguments back to the model, and stops at the step limit (a step is a model call or a tool call)', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'c1', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'x', extra: 1 }) }] },
      { type: 'tool_calls', calls: [{ id: 'c2', name: 'rm_rf', arguments: '{}' }] },
      { type: 'tool_calls', calls: [{ id: 'c3', name: 'sandbox_execute', arguments: 'not json' }] },
    ]);
    // model, tool, model, tool, model: the fifth step; the third tool call would be the sixth.
    const agent = await stack.createAgent(acct, { tools: ['sandbox.execute'], limits: { step_limit: 5, budget_usd: 1 } });
    const start = stack.upstream.requests.length;
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'go' })).id);
    expect(run).toMatchObject({ status: 'step_limit_reached', step_count: 5 });
    expect((await stack.call('listSteps', { account_id: acct, run_id: run.id })).steps).toHaveLength(5);
    const reqs = stack.upstream.requests.slice(start);
    expect(reqs).toHaveLength(3);
    const toolMsg = (i: number) => JSON.parse(reqs[i]!.body.messages.at(-1).content as string) as { status: string; error: string };
    expect(reqs[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(toolMsg(1)).toMatchObject({ status: 'error', error: 'invalid_arguments' });
    expect(toolMsg(2)).toMatchObject({ status: 'error', error: 'unknown_tool' });
    // Three model calls are billed; the refused tool calls are not.
    expect(run.receipt_count).toBe(3);
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
  });

  it('tells the model an agent may not use a tool it was not given', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([
      { type: 'tool_calls', calls: [{ id: 'c1', name: 'sandbox_execute', arguments: JSON.stringify({ runtime: 'python', code: 'print(1)' }) }] },
      text('fine'),
    ]);
    const agent = await stack.createAgent(acct, { tools: [] });
    const start = stack.upstream.requests.length;
    const run = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'go' })).id);
    expect(run).toMatchObject({ status: 'succeeded', output: 'fine' });
    const second = stack.upstream.requests[start + 1]!;
    expect(second.body.tools).toBeUndefined();
    expect(JSON.parse(second.body.messages.at(-1).content as string)).toMatchObject({ error: 'tool_not_allowed' });
  });

  it('returns the same run for a repeated create with one idempotency key, and executes it once', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('once')]);
    const agent = await stack.createAgent(acct);
    const start = stack.upstream.requests.length;
    const [a, b] = await Promise.all([
      stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x', idempotency_key: 'k-1' }),
      stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x', idempotency_key: 'k-1' }),
    ]);
    expect(a.id).toBe(b.id);
    const run = await stack.waitForRun(acct, a.id);
    expect(run.status).toBe('succeeded');
    expect(stack.upstream.requests.length - start).toBe(1);
    expect((await stack.call('listRuns', { account_id: acct })).runs).toHaveLength(1);
  });

  it('cancels a running run: answers cancelling at once, stops the model call in flight (not charged), ends cancelled', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([{ type: 'tool_calls', calls: [{ name: 'sandbox_execute', arguments: '{}' }], headersDelayMs: 5_000 }, text('never')]);
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(stack.upstream.requests.length + 1, 20_000).catch(() => undefined);
    const answer = await stack.call('cancelRun', { account_id: acct, run_id: created.id });
    expect(answer.status).toBe('cancelling');
    const run = await stack.waitForRun(acct, created.id);
    expect(run).toMatchObject({ status: 'cancelled', receipt_count: 0, step_count: 0, spent_usd: 0 });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: run.id })).valid).toBe(true);
    const { events } = await stack.call('runEvents', { account_id: acct, run_id: run.id, after: 0, wait_ms: 0 });
    expect(events.filter((e) => e.type === 'run.status').map((e) => e.data.status)).toEqual(['queued', 'running', 'cancelling', 'cancelled']);
    // An ended run cannot be cancelled.
    await expect(stack.call('cancelRun', { account_id: acct, run_id: run.id })).rejects.toMatchObject({ code: 'run_already_finished' });
  });

  it('a cancel answered by another replica (seen only in the database) stops the operation in flight within a poll', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([{ type: 'tool_calls', calls: [{ name: 'sandbox_execute', arguments: '{}' }], headersDelayMs: 10_000 }, text('never')]);
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.upstream.waitForRequests(stack.upstream.requests.length + 1, 20_000).catch(() => undefined);
    // What requestCancel writes on whichever replica answered; this worker's own fast path is not told.
    await stack.db.query(`UPDATE runs SET cancel_requested = true WHERE id = $1 AND status = 'running'`, [created.id]);
    const run = await stack.waitForRun(acct, created.id);
    // Stopped during the model call: had the worker waited for it, the call would have been charged (one receipt).
    expect(run).toMatchObject({ status: 'cancelled', receipt_count: 0, step_count: 0 });
  });

  it('cancels a queued run at once, with a signed empty run end', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct);
    // A run row with no job in the queue stays queued: the state a run is in before a worker takes it.
    const task = FieldCipher.fromConfig(stack.env.AGENT_RUN_DATA_KEYS!, 'k1').encrypt('parked', { table: 'runs', id: 'run_parked', column: 'task' });
    await stack.db.query(
      `INSERT INTO runs (id, account_id, agent_id, model, tools, step_limit, task, budget_micros, salt)
       SELECT 'run_parked', $1, id, model, tools, step_limit, $3, budget_micros, '\\x00' FROM agents WHERE id = $2`,
      [acct, agent.id, task],
    );
    const run = await stack.call('cancelRun', { account_id: acct, run_id: 'run_parked' });
    expect(run).toMatchObject({ status: 'cancelled', task: 'parked', receipt_count: 0 });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: 'run_parked' })).valid).toBe(true);
  });

  it('streams events: run.status per status, run.step per step, then run.done', async () => {
    const acct = await stack.account();
    stack.upstream.setTurns([text('evented')]);
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'x' });
    await stack.waitForRun(acct, created.id);
    const { events, done } = await stack.call('runEvents', { account_id: acct, run_id: created.id, after: 0, wait_ms: 0 });
    expect(done).toBe(true);
    expect(events.map((e) => [e.seq, e.type, e.type === 'run.step' ? e.data.kind : e.data.status])).toEqual([
      [1, 'run.status', 'queued'],
      [2, 'run.status', 'running'],
      [3, 'run.step', 'inference.chat'],
      [4, 'run.status', 'succeeded'],
      [5, 'run.done', 'succeeded'],
    ]);
    // A reader that reconnects after an event gets only what follows it.
    expect((await stack.call('runEvents', { account_id: acct, run_id: created.id, after: 3, wait_ms: 0 })).events.map((e) => e.seq)).toEqual([4, 5]);
    const receipts = await stack.call('listReceipts', { account_id: acct, run_id: created.id });
    expect((receipts.receipts[0] as Receipt).payload.kind).toBe('inference.chat');
  });
});
