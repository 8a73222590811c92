import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, type Run } from '@drael/contracts';
import { verifyReceipts } from '../src/receipts/receipt-verifier.js';
import { startStack, type Stack } from './harness.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workerEnv: { AGENT_RUN_SANDBOX_USD_PER_SECOND: '0.0001', AGENT_RUN_INFERENCE_RETRIES: '2', AGENT_RUN_CONCURRENCY: '5' } });
}, 120_000);
afterAll(async () => stack?.stop());

const text = (content: string, usage = { prompt_tokens: 50, completion_tokens: 10 }) => ({ type: 'text' as const, content, usage });
const badToolCall = { type: 'tool_calls' as const, calls: [{ name: 'sandbox_execute', arguments: 'not json' }], usage: { prompt_tokens: 10, completion_tokens: 5 } };
const micros = (usd: number) => Math.round(usd * 1_000_000);
const wallet = (account_id: string) => stack.rpc.request(billingCatalog.wallet, { account_id }, { timeoutMs: 15_000 });

async function run(acct: string, limits = { step_limit: 5, budget_usd: 1 }, task = 'go'): Promise<Run> {
  const agent = await stack.createAgent(acct, { limits });
  return stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task })).id);
}

/** The run's spend holds in billing's own tables. */
const holdsOf = (runId: string) =>
  stack.billingDb.query<{ status: string; amount_micros: string; settled_micros: string | null; receipt_hash: string | null }>(
    'SELECT status::text, amount_micros, settled_micros, receipt_hash FROM spend_holds WHERE run_id = $1 ORDER BY created_at',
    [runId],
  );

describe('agent steps billed to the account that owns the agent (real billing service)', () => {
  it("charges each step to the account's balance and this month's spend; billing issued the receipts agent-run stores", async () => {
    const acct = await stack.account(1);
    stack.upstream.setTurns([badToolCall, text('paid for')]);
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'succeeded', receipt_count: 2 });
    // 10 in + 5 out = 30 µ$, then 50 in + 10 out = 90 µ$.
    expect(micros(r.spent_usd)).toBe(120);
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000_000 - 120, held_micros: 0, spent_this_month_micros: 120, held_this_month_micros: 0 });
    const bundle = await stack.call('listReceipts', { account_id: acct, run_id: r.id });
    expect((await holdsOf(r.id)).map((h) => [h.status, h.receipt_hash])).toEqual(bundle.receipts.map((x) => ['settled', x.hash]));
    expect(verifyReceipts(bundle, (await stack.rpc.request(billingCatalog.receiptKey, {})).keys).valid).toBe(true);
    const usage = await stack.rpc.request(billingCatalog.usage, { account_id: acct });
    expect(usage.agent_spend).toMatchObject({ balance_usd: 0.99988, spent_this_month_usd: 0.00012 });
  });

  it('refuses the model call when the balance cannot cover its reservation: budget_exceeded (insufficient_balance), no call made', async () => {
    // Enough for the least model call (64 output tokens), so the run is accepted, not for this call's reservation.
    const acct = await stack.account(0.001);
    const before = stack.upstream.requests.length;
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'budget_exceeded', error: { code: 'insufficient_balance' }, receipt_count: 0, spent_usd: 0 });
    expect(stack.upstream.requests.length).toBe(before);
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000, held_micros: 0 });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: r.id })).valid).toBe(true);
  });

  it("stops the run when the account's monthly budget cannot cover the next operation (monthly_budget_reached)", async () => {
    const acct = await stack.account(100);
    stack.upstream.setTurns([{ ...badToolCall, headersDelayMs: 1_500 }, text('never')]);
    const before = stack.upstream.requests.length;
    const agent = await stack.createAgent(acct);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'go' });
    // While the first model call is in flight, the operator caps the month at nothing more: the
    // month keeps what it already holds (that call's reservation), nothing beyond.
    await stack.upstream.waitForRequests(before + 1, 30_000);
    const capped = await stack.rpc.request(billingCatalog.setAgentLimits, { account_id: acct, monthly_budget_micros: 0 });
    expect(capped.held_this_month_micros).toBeGreaterThan(0);
    const r = await stack.waitForRun(acct, created.id);
    expect(r).toMatchObject({ status: 'budget_exceeded', error: { code: 'monthly_budget_reached' }, receipt_count: 1 });
    expect(stack.upstream.requests.length - before).toBe(1);
    const w = await wallet(acct);
    expect(w).toMatchObject({ held_this_month_micros: 0, spent_this_month_micros: micros(r.spent_usd) });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: r.id })).valid).toBe(true);
  });

  it("stops the run at the account's agent step rate (agent_rate_limited), not at any API-key limit", async () => {
    const acct = await stack.account(100);
    await stack.rpc.request(billingCatalog.setAgentLimits, { account_id: acct, agent_steps_per_minute: 2 });
    stack.upstream.setTurns([badToolCall, badToolCall, text('never')]);
    const before = stack.upstream.requests.length;
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'budget_exceeded', error: { code: 'agent_rate_limited' }, receipt_count: 2 });
    expect(stack.upstream.requests.length - before).toBe(2);
  });

  it('concurrent runs against a small balance never spend past it', async () => {
    const acct = await stack.account(0.0025);
    stack.upstream.setTurns(Array.from({ length: 8 }, () => text('ok')));
    // Each model call reserves about 1,000 µ$ (its run budget's ceiling) and costs 90 µ$.
    const agent = await stack.createAgent(acct, { limits: { step_limit: 1, budget_usd: 0.001 } });
    const created = await Promise.all(Array.from({ length: 8 }, (_, i) => stack.call('createRun', { account_id: acct, agent_id: agent.id, task: `t${i}` })));
    const runs = await Promise.all(created.map((c) => stack.waitForRun(acct, c.id)));
    for (const r of runs) {
      expect(['succeeded', 'budget_exceeded']).toContain(r.status);
      if (r.status === 'budget_exceeded') expect(r.error?.code).toBe('insufficient_balance');
    }
    const spent = runs.reduce((sum, r) => sum + micros(r.spent_usd), 0);
    const w = await wallet(acct);
    expect(w).toMatchObject({ held_micros: 0, balance_micros: 2_500 - spent, spent_this_month_micros: spent });
    expect(spent).toBeLessThanOrEqual(2_500);
    expect(runs.some((r) => r.status === 'succeeded')).toBe(true);
  });
});

describe('model call retries', () => {
  it('retries a 503 and a 429 before any output, then bills the one call that answered, once', async () => {
    const acct = await stack.account(1);
    stack.upstream.setTurns([{ type: 'error', status: 503, message: 'overloaded' }, { type: 'error', status: 429, message: 'slow down' }, text('third time')]);
    const before = stack.upstream.requests.length;
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'succeeded', output: 'third time', receipt_count: 1, step_count: 1 });
    expect(stack.upstream.requests.length - before).toBe(3);
    expect(micros(r.spent_usd)).toBe(90);
    const steps = await stack.call('listSteps', { account_id: acct, run_id: r.id });
    expect(steps.steps[0]!.detail).toMatchObject({ attempts: 3 });
    // One reservation for all three attempts, settled once.
    expect((await holdsOf(r.id)).map((h) => [h.status, h.settled_micros])).toEqual([['settled', '90']]);
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000_000 - 90, held_micros: 0 });
  });

  it('gives up after the bounded retries: the run fails and its reservation is released, nothing charged', async () => {
    const acct = await stack.account(1);
    stack.upstream.setTurns([
      { type: 'error', status: 502, message: 'bad gateway' },
      { type: 'error', status: 500, message: 'boom' },
      { type: 'error', status: 503, message: 'still down' },
      text('too late'),
    ]);
    const before = stack.upstream.requests.length;
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'failed', error: { code: 'upstream_error' }, receipt_count: 0, spent_usd: 0 });
    expect(stack.upstream.requests.length - before).toBe(3);
    expect((await holdsOf(r.id)).map((h) => h.status)).toEqual(['released']);
    expect(await wallet(acct)).toMatchObject({ balance_micros: 1_000_000, held_micros: 0, spent_this_month_micros: 0 });
    expect((await stack.call('verifyRun', { account_id: acct, run_id: r.id })).valid).toBe(true);
    stack.upstream.setTurns([]);
  });

  it('does not retry a client error (400): the run fails at once', async () => {
    const acct = await stack.account(1);
    stack.upstream.setTurns([{ type: 'error', status: 400, message: 'bad request' }, text('never')]);
    const before = stack.upstream.requests.length;
    const r = await run(acct);
    expect(r).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    expect(stack.upstream.requests.length - before).toBe(1);
    stack.upstream.setTurns([]);
  });
});
