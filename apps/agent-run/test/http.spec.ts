import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { createTestKey } from '@drael/test-support';
import { startStack, type Stack } from './harness.js';

let stack: Stack;
let auth: Record<string, string>;

beforeAll(async () => {
  stack = await startStack();
  auth = { ...stack.gateway.authHeaders };
}, 180_000);
afterAll(async () => stack?.stop());

/**
 * The CLI as a child process, awaited without blocking this process: a blocked event loop misses
 * the gateway closing an idle keep-alive socket, and the next request would be sent on it.
 */
function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout }));
  });
}

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${stack.gateway.url}${path}`, { ...init, headers: { ...auth, ...(init.body ? { 'content-type': 'application/json' } : {}) } });

describe('gateway HTTP endpoints for agents and runs (real gateway, billing key, agent-run)', { timeout: 120_000 }, () => {
  it('creates an agent, runs a task, streams its events, and the CLI verifies its receipts', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'over http', usage: { prompt_tokens: 20, completion_tokens: 4 } }]);
    const agentRes = await api('/v1/agents', {
      method: 'POST',
      body: JSON.stringify({ name: 'h', model: 'test-model', instructions: 'be brief', tools: ['sandbox.execute'], limits: { step_limit: 3, budget_usd: 0.5 } }),
    });
    expect(agentRes.status).toBe(201);
    const agent = (await agentRes.json()) as { id: string; object: string; account_id: string };
    expect(agent).toMatchObject({ object: 'agent', account_id: stack.gateway.key.account_id });

    const runRes = await api(`/v1/agents/${agent.id}/runs`, { method: 'POST', body: JSON.stringify({ task: 'say it' }) });
    expect(runRes.status).toBe(202);
    const run = (await runRes.json()) as { id: string; status: string };
    expect(run.status).toBe('queued');

    const events = await api(`/v1/runs/${run.id}/events`);
    expect(events.headers.get('content-type')).toMatch(/text\/event-stream/);
    const sse = await events.text();
    expect(sse).toMatch(/id: 1\nevent: run.status\ndata: .*"status":"queued"/);
    expect(sse).toMatch(/id: 3\nevent: run.step\n/);
    expect(sse).toMatch(/event: run.done\ndata: .*"status":"succeeded"/);
    // Resuming: only what came after the id sent back; an id no stream sends is a 400 before any
    // byte of the stream (2^31 reached agent-run's int4 column and ended the stream with an internal error).
    const resumed = await (await fetch(`${stack.gateway.url}/v1/runs/${run.id}/events`, { headers: { ...auth, 'last-event-id': '2' } })).text();
    expect(resumed).not.toMatch(/^id: [12]\n/m);
    expect(resumed).toMatch(/event: run.done/);
    for (const bad of ['2147483648', '-1', '1e3', 'x']) {
      const res = await fetch(`${stack.gateway.url}/v1/runs/${run.id}/events`, { headers: { ...auth, 'last-event-id': bad } });
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'Last-Event-ID' } });
    }

    const final = (await (await api(`/v1/runs/${run.id}`)).json()) as { status: string; output: string };
    expect(final).toMatchObject({ status: 'succeeded', output: 'over http' });
    const steps = (await (await api(`/v1/runs/${run.id}/steps`)).json()) as { data: unknown[] };
    expect(steps.data).toHaveLength(1);
    expect(await (await api(`/v1/runs/${run.id}/verify`)).json()).toMatchObject({ valid: true, receipt_count: 1 });

    const receipts = await (await api(`/v1/runs/${run.id}/receipts`)).text();
    const { public_key } = (await (await api('/v1/receipts/public-key')).json()) as { public_key: string };
    // billing signs the receipts: the key the gateway publishes is billing's.
    expect(public_key).toBe((await stack.rpc.request(billingCatalog.receiptKey, {})).public_key);
    expect(JSON.parse(receipts)).toMatchObject({ public_key });
    const file = join(mkdtempSync(join(tmpdir(), 'receipts-http-')), 'r.json');
    writeFileSync(file, receipts);
    const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'receipts.cli.js');
    const ok = await runCli([cli, 'verify', file, '--public-key', public_key]);
    expect(ok.status).toBe(0);
    // Or against the key billing answers with over NATS, the same key.
    const viaBilling = await runCli([cli, 'verify', file, '--key-from-billing'], { ...process.env, NATS_URL: stack.env.NATS_URL, DRAEL_NATS_PREFIX: stack.prefix });
    expect(viaBilling.stdout).toMatch(/^valid: /);
    expect(viaBilling.status).toBe(0);
    const cut = JSON.parse(receipts) as { receipts: unknown[] };
    cut.receipts.pop();
    writeFileSync(file, JSON.stringify(cut));
    expect((await runCli([cli, 'verify', file, '--public-key', public_key])).status).toBe(1);
  });

  it('answers 400 for a task of 0 or 50,001 characters', async () => {
    const agent = (await (await api('/v1/agents', { method: 'POST', body: JSON.stringify({ model: 'test-model' }) })).json()) as { id: string };
    for (const task of ['', 'y'.repeat(50_001)]) {
      const res = await api(`/v1/agents/${agent.id}/runs`, { method: 'POST', body: JSON.stringify({ task }) });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_task', type: 'invalid_request_error' } });
    }
  });

  it("scopes everything to the key's account: another account gets 404", async () => {
    const agent = (await (await api('/v1/agents', { method: 'POST', body: JSON.stringify({ model: 'test-model' }) })).json()) as { id: string };
    const other = await createTestKey(stack.rpc, {});
    const asOther = (path: string, init: RequestInit = {}) =>
      fetch(`${stack.gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${other.api_key}`, 'content-type': 'application/json' } });
    expect((await asOther(`/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await asOther(`/v1/agents/${agent.id}/runs`, { method: 'POST', body: JSON.stringify({ task: 'x' }) })).status).toBe(404);
    expect((await asOther('/v1/agents')).status).toBe(200);
    expect(((await (await asOther('/v1/agents')).json()) as { data: unknown[] }).data).toHaveLength(0);
    expect((await fetch(`${stack.gateway.url}/v1/agents`)).status).toBe(401);
  });

  it("runs are billed to the account, not held to the key's limits: a key of 2 requests a minute starts a run of 4 model calls", async () => {
    const key = await createTestKey(stack.rpc, { rate_limit: { per_minute: 2, per_hour: 100 } });
    await stack.rpc.request(billingCatalog.creditWallet, { account_id: key.account_id, amount_micros: 1_000_000 });
    await stack.rpc.request(billingCatalog.setAgentLimits, { account_id: key.account_id, agent_steps_per_minute: 100 });
    const asKey = (path: string, body: unknown) =>
      fetch(`${stack.gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bad = { type: 'tool_calls' as const, calls: [{ name: 'sandbox_execute', arguments: 'not json' }], usage: { prompt_tokens: 10, completion_tokens: 5 } };
    stack.upstream.setTurns([bad, bad, bad, { type: 'text', content: 'four calls', usage: { prompt_tokens: 10, completion_tokens: 5 } }]);
    const agent = (await (await asKey('/v1/agents', { model: 'test-model' })).json()) as { id: string };
    const created = (await (await asKey(`/v1/agents/${agent.id}/runs`, { task: 'go' })).json()) as { id: string };
    // The key's third request of the minute is refused; the run's four model calls are not.
    expect((await asKey('/v1/agents', { model: 'test-model' })).status).toBe(429);
    const run = await stack.waitForRun(key.account_id, created.id);
    expect(run).toMatchObject({ status: 'succeeded', output: 'four calls', receipt_count: 4 });
    const w = await stack.rpc.request(billingCatalog.wallet, { account_id: key.account_id });
    expect(w).toMatchObject({ balance_micros: 1_000_000 - 4 * 30, held_micros: 0 });
  });

  it('a key revoked while its run-event stream is open reads nothing more: the stream ends with invalid_api_key', async () => {
    const key = await createTestKey(stack.rpc, {});
    await stack.rpc.request(billingCatalog.creditWallet, { account_id: key.account_id, amount_micros: 1_000_000 });
    await stack.rpc.request(billingCatalog.setAgentLimits, { account_id: key.account_id, agent_steps_per_minute: 100 });
    const headers = { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' };
    // The run's one model call answers after 7 s: its step and its end come after the revocation.
    stack.upstream.setTurns([{ type: 'text', content: 'secret output', headersDelayMs: 7_000, usage: { prompt_tokens: 10, completion_tokens: 5 } }]);
    const agent = (await (await fetch(`${stack.gateway.url}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ model: 'test-model' }) })).json()) as { id: string };
    const run = (await (await fetch(`${stack.gateway.url}/v1/agents/${agent.id}/runs`, { method: 'POST', headers, body: JSON.stringify({ task: 'go' }) })).json()) as {
      id: string;
    };
    const events = await fetch(`${stack.gateway.url}/v1/runs/${run.id}/events`, { headers });
    expect(events.status).toBe(200);
    await stack.rpc.request(billingCatalog.revokeKey, { account_id: key.account_id, key_id: key.key_id });
    const sse = await events.text();
    expect(sse).toMatch(/event: error\ndata: .*"code":"invalid_api_key"/);
    expect(sse).not.toContain('secret output');
    expect(sse).not.toContain('event: run.done');
    // The run itself goes on (revoking a key does not cancel the account's work).
    expect(await stack.waitForRun(key.account_id, run.id)).toMatchObject({ status: 'succeeded' });
  });

  it('updates and deletes an agent', async () => {
    const agent = (await (await api('/v1/agents', { method: 'POST', body: JSON.stringify({ model: 'test-model', instructions: 'old' }) })).json()) as { id: string };
    const patched = await (await api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: JSON.stringify({ instructions: 'new', limits: { step_limit: 7 } }) })).json();
    expect(patched).toMatchObject({ instructions: 'new', limits: { step_limit: 7 } });
    expect((await api(`/v1/agents/${agent.id}`, { method: 'PATCH', body: JSON.stringify({ tools: ['rm_rf'] }) })).status).toBe(400);
    expect(await (await api(`/v1/agents/${agent.id}`, { method: 'DELETE' })).json()).toMatchObject({ id: agent.id, deleted: true });
    expect((await api(`/v1/agents/${agent.id}`)).status).toBe(404);
  });
});
