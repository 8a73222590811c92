import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, type Agent, type Run } from '@drael/contracts';
import { isRpcError } from '@drael/nats-rpc';
import { createTestKey } from '@drael/test-support';
import { startStack, type Stack } from './harness.js';

// Attack report 4: what one account may store in agent-run (F1, F2) and the list pages of large objects (F5).
const MAX_AGENTS = 20;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workerEnv: { AGENT_RUN_ACCOUNT_MAX_AGENTS: String(MAX_AGENTS) } });
}, 180_000);
afterAll(async () => stack?.stop());

const codeOf = (err: unknown) => (isRpcError(err) ? err.code : err);
const agentRows = (accountId: string) =>
  stack.db.query<{ id: string; deleted: boolean }>('SELECT id, deleted_at IS NOT NULL AS deleted FROM agents WHERE account_id = $1', [accountId]);
const runRows = (accountId: string) => stack.db.query<{ id: string }>('SELECT id FROM runs WHERE account_id = $1', [accountId]);

describe('F1: live agents per account are capped (AGENT_RUN_ACCOUNT_MAX_AGENTS)', { timeout: 120_000 }, () => {
  it('concurrent creates never pass the cap; the rest are quota_exceeded and store nothing', async () => {
    const acct = await stack.account();
    const made = await Promise.allSettled(
      Array.from({ length: MAX_AGENTS + 10 }, () =>
        stack.call('createAgent', { account_id: acct, agent: { model: 'test-model', instructions: 'i'.repeat(100_000), tools: [], limits: { step_limit: 1, budget_usd: 1 } } }),
      ),
    );
    expect(made.filter((m) => m.status === 'fulfilled')).toHaveLength(MAX_AGENTS);
    const refused = made.flatMap((m) => (m.status === 'rejected' ? [m.reason as unknown] : []));
    expect(refused.map(codeOf)).toEqual(Array.from({ length: 10 }, () => 'quota_exceeded'));
    expect(refused[0]).toMatchObject({ details: { limit: MAX_AGENTS } });
    expect(await agentRows(acct)).toHaveLength(MAX_AGENTS);
  });

  it('a deleted agent frees its place: removed when no run names it, kept (not counted) for its runs', async () => {
    const acct = await stack.account();
    const agents: Agent[] = [];
    for (let i = 0; i < MAX_AGENTS; i++) agents.push(await stack.createAgent(acct, { tools: [] }));
    await expect(stack.createAgent(acct, { tools: [] })).rejects.toMatchObject({ code: 'quota_exceeded' });

    const [unused, used] = agents as [Agent, Agent];
    stack.upstream.setTurns([{ type: 'text', content: 'done', usage: { prompt_tokens: 5, completion_tokens: 1 } }]);
    const run = await stack.call('createRun', { account_id: acct, agent_id: used.id, task: 'go' });
    await stack.waitForRun(acct, run.id);

    await stack.call('deleteAgent', { account_id: acct, agent_id: unused.id });
    await stack.call('deleteAgent', { account_id: acct, agent_id: used.id });
    const rows = await agentRows(acct);
    expect(rows.find((r) => r.id === unused.id)).toBeUndefined();
    expect(rows.find((r) => r.id === used.id)).toMatchObject({ deleted: true });
    // Its run still reads, and both places are free again.
    expect((await stack.call('getRun', { account_id: acct, run_id: run.id })).agent_id).toBe(used.id);
    await stack.createAgent(acct, { tools: [] });
    await stack.createAgent(acct, { tools: [] });
    await expect(stack.createAgent(acct, { tools: [] })).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('over HTTP the refusal is 429 quota_exceeded in the OpenAI envelope', async () => {
    const key = await createTestKey(stack.rpc);
    const post = () =>
      fetch(`${stack.gateway.url}/v1/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test-model', tools: [] }),
      });
    for (let i = 0; i < MAX_AGENTS; i++) expect((await post()).status).toBe(201);
    const res = await post();
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: { code: 'quota_exceeded', type: 'insufficient_quota' } });
  });
});

describe('F2: a run is refused, before it is stored, when the account cannot pay its first step', { timeout: 120_000 }, () => {
  it('an empty wallet gets insufficient_balance and no run row, however often it asks', async () => {
    const acct = await stack.account(0);
    const agent = await stack.createAgent(acct, { tools: [] });
    const before = stack.upstream.requests.length;
    const tries = await Promise.allSettled(Array.from({ length: 10 }, () => stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'T'.repeat(50_000) })));
    expect(tries.map((t) => (t.status === 'rejected' ? codeOf(t.reason) : 'created'))).toEqual(Array.from({ length: 10 }, () => 'insufficient_balance'));
    expect(await runRows(acct)).toHaveLength(0);
    expect(stack.upstream.requests.length).toBe(before);
  });

  it('keeps idempotency: a refused key stored nothing, so after a top-up the same key makes the run once', async () => {
    const acct = await stack.account(0);
    const agent = await stack.createAgent(acct, { tools: [] });
    const req = { account_id: acct, agent_id: agent.id, task: 'paid later', idempotency_key: 'k-topup' };
    await expect(stack.call('createRun', req)).rejects.toMatchObject({ code: 'insufficient_balance' });
    await stack.rpc.request(billingCatalog.creditWallet, { account_id: acct, amount_micros: 1_000_000 }, { timeoutMs: 15_000 });
    stack.upstream.setTurns([{ type: 'text', content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1 } }]);
    const first = await stack.call('createRun', req);
    const again = await stack.call('createRun', req);
    expect(again.id).toBe(first.id);
    expect(await runRows(acct)).toHaveLength(1);
    await stack.waitForRun(acct, first.id);
  });

  it('over HTTP the refusal is 429 insufficient_balance in the OpenAI envelope', async () => {
    const key = await createTestKey(stack.rpc);
    const headers = { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' };
    const agent = (await (await fetch(`${stack.gateway.url}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ model: 'test-model', tools: [] }) })).json()) as {
      id: string;
    };
    const res = await fetch(`${stack.gateway.url}/v1/agents/${agent.id}/runs`, { method: 'POST', headers, body: JSON.stringify({ task: 'free?' }) });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: { code: 'insufficient_balance', type: 'insufficient_quota' } });
  });
});

describe('F5: a list page of large objects is cut to one NATS reply, and has_more continues it', { timeout: 180_000 }, () => {
  /** Every page of a list from the start, following each page's last id with `after` (or `before`). */
  async function walk<T extends { id: string }>(page: (cursor: { after?: string; before?: string }) => Promise<{ items: T[]; has_more: boolean }>, dir: 'after' | 'before') {
    const pages: T[][] = [];
    let cursor: { after?: string; before?: string } = {};
    for (;;) {
      const { items, has_more } = await page(cursor);
      pages.push(items);
      if (!has_more) return pages;
      expect(items.length).toBeGreaterThan(0);
      cursor = { [dir]: (dir === 'after' ? items.at(-1) : items[0])!.id };
    }
  }

  it('agents: limit=100 over 15 agents of 100,000 characters answers pages that hold every agent once, in order', async () => {
    const acct = await stack.account();
    const made: Agent[] = [];
    for (let i = 0; i < 15; i++) made.push(await stack.createAgent(acct, { tools: [], instructions: String(i % 10).repeat(100_000) }));
    const pages = await walk((c) => stack.call('listAgents', { account_id: acct, limit: 100, ...c }).then((r) => ({ items: r.agents, has_more: r.has_more })), 'after');
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flat().map((a) => a.id)).toEqual(made.map((a) => a.id).reverse());
    expect(pages.flat().every((a) => a.instructions.length === 100_000)).toBe(true);
    // Backwards (`before`, ascending) from the newest agent: the pages nearest it first, every older agent once.
    const newest = made.at(-1)!.id;
    const back = await walk(
      (c) => stack.call('listAgents', { account_id: acct, limit: 100, order: 'asc', before: c.before ?? newest }).then((r) => ({ items: r.agents, has_more: r.has_more })),
      'before',
    );
    expect(back.length).toBeGreaterThan(1);
    expect(
      back
        .reverse()
        .flat()
        .map((a) => a.id),
    ).toEqual(made.slice(0, -1).map((a) => a.id));
  });

  it('runs: limit=100 over 25 runs of 50,000-character tasks, as listRuns and for one agent', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct, { tools: [] });
    stack.upstream.setTurns(Array.from({ length: 25 }, () => ({ type: 'text' as const, content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1 } })));
    const made: Run[] = [];
    for (let i = 0; i < 25; i++) made.push(await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: String(i % 10).repeat(50_000) }));
    for (const agentId of [undefined, agent.id]) {
      const pages = await walk(
        (c) => stack.call('listRuns', { account_id: acct, limit: 100, agent_id: agentId, ...c }).then((r) => ({ items: r.runs, has_more: r.has_more })),
        'after',
      );
      expect(pages.length).toBeGreaterThan(1);
      expect(pages.flat().map((r) => r.id)).toEqual(made.map((r) => r.id).reverse());
    }
    // What fits is served whole: a small limit is not cut.
    expect((await stack.call('listRuns', { account_id: acct, limit: 2 })).runs).toHaveLength(2);
  });
});
