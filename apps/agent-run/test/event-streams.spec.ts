import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { createTestKey } from '@drael/test-support';
import { startStack, type Stack } from './harness.js';

// Attack report F5: one key held 150 run event streams (GET /v1/runs/{id}/events) open, each a long
// poll on agent-run reading Postgres every 200 ms. An account now holds at most
// RUN_EVENT_STREAMS_PER_ACCOUNT (default 20) open on one gateway replica; past it 429
// too_many_event_streams, and a place comes back when its stream ends or its client hangs up.

const BOUND = 20; // the gateway's default RUN_EVENT_STREAMS_PER_ACCOUNT
let stack: Stack;
const text = (content: string, extra = {}) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 }, ...extra });
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the request body as the upstream received it
const taskOf = (body: any): string => String(body?.messages?.at(-1)?.content ?? '');

beforeAll(async () => {
  stack = await startStack({ choose: (body) => (taskOf(body).includes('slow') ? text('slow done', { headersDelayMs: 60_000 }) : text('quick done')) });
}, 180_000);
afterAll(async () => stack?.stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('open run event streams per account', { timeout: 120_000 }, () => {
  it('past the bound a stream is refused with a typed 429; a place comes back when a client hangs up or a stream ends; other accounts are not held', async () => {
    const acct = stack.gateway.key.account_id;
    const headers = stack.gateway.authHeaders;
    const agent = await stack.createAgent(acct, { tools: [] });
    const slow = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'slow' });
    const open = (signal: AbortSignal, runId = slow.id, h: Record<string, string> = headers) => fetch(`${stack.gateway.url}/v1/runs/${runId}/events`, { headers: h, signal });

    const clients = Array.from({ length: BOUND }, () => new AbortController());
    const streams = await Promise.all(clients.map((c) => open(c.signal)));
    expect(streams.map((s) => s.status)).toEqual(clients.map(() => 200));

    const extra = new AbortController();
    const refused = await open(extra.signal);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: 'too_many_event_streams', type: 'rate_limit_error' });
    expect(body.error.message).toContain(String(BOUND));

    // Another account is not held back by this one's streams.
    const otherKey = await createTestKey(stack.rpc);
    const otherAcct = otherKey.account_id;
    // A run is accepted only from an account that can pay for its first step.
    await stack.rpc.request(billingCatalog.creditWallet, { account_id: otherAcct, amount_micros: 1_000_000 }, { timeoutMs: 15_000 });
    const otherAgent = await stack.createAgent(otherAcct, { tools: [] });
    const otherRun = await stack.call('createRun', { account_id: otherAcct, agent_id: otherAgent.id, task: 'slow other' });
    const otherClient = new AbortController();
    const otherStream = await open(otherClient.signal, otherRun.id, { authorization: `Bearer ${otherKey.api_key}` });
    expect(otherStream.status).toBe(200);
    otherClient.abort();

    // Five clients hang up (their long polls on agent-run are still in flight): five places come back at once.
    for (const c of clients.splice(0, 5)) c.abort();
    await sleep(300);
    const reopened = Array.from({ length: 5 }, () => new AbortController());
    expect((await Promise.all(reopened.map((c) => open(c.signal)))).map((s) => s.status)).toEqual([200, 200, 200, 200, 200]);
    clients.push(...reopened);
    expect((await open(new AbortController().signal)).status).toBe(429);

    // Streams that end by themselves (the run ended) give their places back too.
    for (const c of clients) c.abort();
    await sleep(300);
    const quick = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'quick' });
    await stack.waitForRun(acct, quick.id);
    for (let i = 0; i < BOUND + 5; i++) {
      const res = await open(new AbortController().signal, quick.id);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('event: run.done');
    }
    // (The other account has no money: its run may already have ended budget_exceeded.)
    for (const [a, r] of [
      [acct, slow.id],
      [otherAcct, otherRun.id],
    ] as const)
      await stack.call('cancelRun', { account_id: a, run_id: r }).catch(() => undefined);
  });
  // Last: it stops the stack's gateway.
  it('a gateway that stops ends an open run event stream at once with a retryable error event, so its client resumes on another replica (it used to hold the shutdown for the whole grace, then was cut)', async () => {
    const acct = stack.gateway.key.account_id;
    const agent = await stack.createAgent(acct, { tools: [] });
    const slow = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'slow, to outlive the gateway' });
    const res = await fetch(`${stack.gateway.url}/v1/runs/${slow.id}/events`, { headers: stack.gateway.authHeaders });
    expect(res.status).toBe(200);
    const body = res.text();
    stack.gateway.child.kill('SIGTERM');
    // Read to the end: a connection cut at the grace's end would reject here instead.
    const text = await body;
    const last = text.trim().split('\n\n').at(-1) ?? '';
    expect(last).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(last.split('\ndata: ')[1]!)).toMatchObject({ error: { code: 'service_unavailable', type: 'service_unavailable_error' } });
    await stack.call('cancelRun', { account_id: acct, run_id: slow.id }).catch(() => undefined);
  });
});
