import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentRunCatalog, billingCatalog, OpenAIErrorEnvelopeSchema, type RpcEntry, type ToolLevel } from '@drael/contracts';
import { wireSubject } from '@drael/nats-rpc';
import { createTestKey, type TestKey } from '@drael/test-support';
import { MODEL, startStack, type Stack } from './harness.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 180_000);
afterAll(async () => stack?.stop());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers are probed field by field

function as(apiKey: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${stack.gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };
}

/** Another key of the same account, at another tool level. */
async function keyOf(account_id: string, tool_level: ToolLevel): Promise<string> {
  const k = await stack.rpc.request(billingCatalog.createKey, { account_id, tool_level, rate_limit: { per_minute: 100_000, per_hour: 1_000_000 } });
  return k.api_key;
}

const expectEnvelope = (json: Json, code: string, type?: string) => {
  expect(OpenAIErrorEnvelopeSchema.safeParse(json).success, JSON.stringify(json)).toBe(true);
  expect(json.error.code).toBe(code);
  if (type) expect(json.error.type).toBe(type);
};

describe('tool levels bind hosted agents (spec 04)', { timeout: 120_000 }, () => {
  it('a key may not create an agent with a tool its level does not allow: 403 tool_not_allowed', async () => {
    const acct = stack.gateway.key.account_id;
    for (const level of ['none', 'l1_http'] as const) {
      const api = as(await keyOf(acct, level));
      const res = await api('POST', '/v1/agents', { model: MODEL, tools: ['sandbox.execute'] });
      expect(res.status, level).toBe(403);
      expectEnvelope(res.json, 'tool_not_allowed', 'permission_error');
      expect(res.json.error.param).toBe('tools[0]');
      // The same key may create an agent with no executed tool.
      expect((await api('POST', '/v1/agents', { model: MODEL, tools: [] })).status).toBe(201);
    }
    expect((await as(await keyOf(acct, 'l3_shell'))('POST', '/v1/agents', { model: MODEL, tools: ['sandbox.execute'] })).status).toBe(201);
  });

  it("each run is checked against the key that starts it: a level-none key of the same account cannot run another key's agent with sandbox.execute", async () => {
    const acct = stack.gateway.key.account_id;
    const owner = as(stack.gateway.key.api_key);
    const agent = (await owner('POST', '/v1/agents', { model: MODEL, tools: ['sandbox.execute'] })).json;
    const none = as(await keyOf(acct, 'none'));
    const before = stack.upstream.requests.length;
    const res = await none('POST', `/v1/agents/${agent.id}/runs`, { task: 'print secrets' });
    expect(res.status).toBe(403);
    expectEnvelope(res.json, 'tool_not_allowed', 'permission_error');
    // Nothing was queued and the model was never called.
    expect((await owner('GET', `/v1/runs?agent_id=${agent.id}`)).json.data).toHaveLength(0);
    expect(stack.upstream.requests.length).toBe(before);
    // Nor reconfigure the agent that has it, nor give an agent the tool afterwards.
    const rewrite = await none('PATCH', `/v1/agents/${agent.id}`, { instructions: 'run this instead' });
    expect(rewrite.status).toBe(403);
    expectEnvelope(rewrite.json, 'tool_not_allowed');
    // Nor take the tool away in the same request to make it an agent it may change.
    const strip = await none('PATCH', `/v1/agents/${agent.id}`, { tools: [], instructions: 'run this instead' });
    expect(strip.status).toBe(403);
    expect(strip.json.error.param).toBe('agent_id');
    expect((await owner('GET', `/v1/agents/${agent.id}`)).json).toMatchObject({ tools: ['sandbox.execute'], instructions: '' });
    const mine = (await none('POST', '/v1/agents', { model: MODEL })).json;
    const patch = await none('PATCH', `/v1/agents/${mine.id}`, { tools: ['sandbox.execute'] });
    expect(patch.status).toBe(403);
    expectEnvelope(patch.json, 'tool_not_allowed');
  });

  it('DELETE follows the rule of PATCH: a level-none key cannot delete an agent with sandbox.execute (it could re-create it at its own level); any key of the account may cancel a run', async () => {
    const acct = stack.gateway.key.account_id;
    const owner = as(stack.gateway.key.api_key);
    const agent = (await owner('POST', '/v1/agents', { model: MODEL, tools: ['sandbox.execute'] })).json;
    const none = as(await keyOf(acct, 'none'));
    const del = await none('DELETE', `/v1/agents/${agent.id}`);
    expect(del.status).toBe(403);
    expectEnvelope(del.json, 'tool_not_allowed', 'permission_error');
    expect(del.json.error.param).toBe('agent_id');
    expect((await owner('GET', `/v1/agents/${agent.id}`)).status).toBe(200);
    // Stopping spend is a safety action: the lower key may cancel the agent's run.
    stack.upstream.setTurns([{ type: 'text', content: 'late', headersDelayMs: 3_000 }]);
    const run = (await owner('POST', `/v1/agents/${agent.id}/runs`, { task: 'x' })).json;
    const cancel = await none('POST', `/v1/runs/${run.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(['cancelled', 'cancelling']).toContain(cancel.json.status);
    // Its own agent without executed tools it may delete; a key allowed the tool deletes this one.
    const mine = (await none('POST', '/v1/agents', { model: MODEL })).json;
    expect((await none('DELETE', `/v1/agents/${mine.id}`)).json).toMatchObject({ id: mine.id, deleted: true });
    expect((await as(await keyOf(acct, 'l3_shell'))('DELETE', `/v1/agents/${agent.id}`)).json).toMatchObject({ id: agent.id, deleted: true });
    // Deleted: not found, for any key.
    expect((await none('DELETE', `/v1/agents/${agent.id}`)).status).toBe(404);
  });
});

describe('agents answer truthfully', { timeout: 120_000 }, () => {
  const api = () => as(stack.gateway.key.api_key);

  it('an agent with an unknown model alias is refused: 404 model_not_found, on create and on update', async () => {
    const res = await api()('POST', '/v1/agents', { model: 'no-such-model' });
    expect(res.status).toBe(404);
    expectEnvelope(res.json, 'model_not_found', 'not_found_error');
    expect(res.json.error.param).toBe('model');
    const agent = (await api()('POST', '/v1/agents', { model: MODEL })).json;
    const patch = await api()('PATCH', `/v1/agents/${agent.id}`, { model: 'no-such-model' });
    expect(patch.status).toBe(404);
    expect((await api()('GET', `/v1/agents/${agent.id}`)).json.model).toBe(MODEL);
  });

  it('step_limit caps step_count: a run with step_limit 3 ends with step_count 3', async () => {
    const bad = { type: 'tool_calls' as const, calls: [{ name: 'sandbox_execute', arguments: 'not json' }], usage: { prompt_tokens: 10, completion_tokens: 5 } };
    stack.upstream.setTurns([bad, bad, bad, bad]);
    const agent = (await api()('POST', '/v1/agents', { model: MODEL, tools: ['sandbox.execute'], limits: { step_limit: 3 } })).json;
    const created = (await api()('POST', `/v1/agents/${agent.id}/runs`, { task: 'loop' })).json;
    const run = await stack.waitForRun(stack.gateway.key.account_id, created.id);
    expect(run).toMatchObject({ status: 'step_limit_reached', step_count: 3 });
    expect((await api()('GET', `/v1/runs/${run.id}/steps`)).json.data).toHaveLength(3);
  });

  it('cancelling a finished run is 409 run_already_finished', async () => {
    stack.upstream.setTurns([{ type: 'text', content: 'done' }]);
    const agent = (await api()('POST', '/v1/agents', { model: MODEL })).json;
    const created = (await api()('POST', `/v1/agents/${agent.id}/runs`, { task: 'x' })).json;
    await stack.waitForRun(stack.gateway.key.account_id, created.id);
    const res = await api()('POST', `/v1/runs/${created.id}/cancel`);
    expect(res.status).toBe(409);
    expectEnvelope(res.json, 'run_already_finished');
  });
});

describe('Idempotency-Key on run creation (Stripe semantics)', { timeout: 120_000 }, () => {
  it('the same request returns the first run; another task or another agent is 409 idempotency_key_reused', async () => {
    const api = as(stack.gateway.key.api_key);
    stack.upstream.setTurns([{ type: 'text', content: 'once' }]);
    const a1 = (await api('POST', '/v1/agents', { model: MODEL })).json;
    const a2 = (await api('POST', '/v1/agents', { model: MODEL })).json;
    const key = { 'idempotency-key': `idem-${Date.now()}` };
    const first = await api('POST', `/v1/agents/${a1.id}/runs`, { task: 'same' }, key);
    expect(first.status).toBe(202);
    const again = await api('POST', `/v1/agents/${a1.id}/runs`, { task: 'same' }, key);
    expect(again.json.id).toBe(first.json.id);
    for (const [path, body] of [
      [`/v1/agents/${a1.id}/runs`, { task: 'another task' }],
      [`/v1/agents/${a2.id}/runs`, { task: 'same' }],
    ] as const) {
      const res = await api('POST', path, body, key);
      expect(res.status, path).toBe(409);
      expectEnvelope(res.json, 'idempotency_key_reused', 'invalid_request_error');
    }
    expect((await api('GET', `/v1/runs?agent_id=${a2.id}`)).json.data).toHaveLength(0);
    expect((await api('GET', `/v1/runs?agent_id=${a1.id}`)).json.data).toHaveLength(1);
    // A key longer than 255 characters is refused, not cut to collide with another.
    const long = await api('POST', `/v1/agents/${a1.id}/runs`, { task: 'same' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(long.status).toBe(400);
    expect(long.json.error.param).toBe('Idempotency-Key');
  });
});

describe('lists paginate as OpenAI lists do', { timeout: 120_000 }, () => {
  it('after, before, limit, order, has_more, first_id, last_id; stable by creation time then id', async () => {
    const key: TestKey = await createTestKey(stack.rpc, { tool_level: 'l3_shell' });
    const api = as(key.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api('POST', '/v1/agents', { name: `a${i}`, model: MODEL })).json.id as string);
    const all = (await api('GET', '/v1/agents?limit=100')).json;
    expect(all).toMatchObject({ object: 'list', has_more: false });
    const newestFirst = (all.data as Json[]).map((a) => a.id as string);
    expect([...newestFirst].sort()).toEqual([...ids].sort());
    expect(newestFirst).toEqual([...ids].reverse());
    expect(all.first_id).toBe(newestFirst[0]);
    expect(all.last_id).toBe(newestFirst[4]);

    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = (await api('GET', `/v1/agents?limit=2${after ? `&after=${after}` : ''}`)).json;
      seen.push(...(page.data as Json[]).map((a) => a.id as string));
      pages++;
      if (!page.has_more) break;
      after = page.last_id as string;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);
    const back = (await api('GET', `/v1/agents?limit=2&before=${newestFirst[4]}`)).json;
    expect((back.data as Json[]).map((a) => a.id)).toEqual(newestFirst.slice(2, 4));
    expect(back.has_more).toBe(true);
    const asc = (await api('GET', '/v1/agents?order=asc&limit=3')).json;
    expect((asc.data as Json[]).map((a) => a.id)).toEqual(ids.slice(0, 3));
    // Empty list: null ids.
    const empty = (await api('GET', '/v1/runs')).json;
    expect(empty).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    // A cursor that names nothing of this account is a 400 naming it.
    const unknown = await api('GET', '/v1/agents?after=agent_nope');
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.param).toBe('after');
  });
});

describe('hostile input reaching agent-run: typed 4xx, never 500', { timeout: 120_000 }, () => {
  it('NUL in ids, cursors, agent_id, names and models', async () => {
    const api = as(stack.gateway.key.api_key);
    const probes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/runs?before=%00'],
      ['GET', '/v1/runs?after=x%00y'],
      ['GET', '/v1/runs?agent_id=%00'],
      ['GET', '/v1/agents?after=%00'],
      ['GET', '/v1/agents/agent_%00'],
      ['GET', '/v1/runs/run_%00'],
      ['POST', '/v1/runs/run_%00/cancel'],
      ['POST', '/v1/agents', { name: 'a\u0000b', model: MODEL }],
      ['POST', '/v1/agents', { name: 'lone \ud800', model: MODEL }],
      ['POST', '/v1/agents', { model: `${MODEL}\u0000` }],
    ];
    for (const [method, path, body] of probes) {
      const res = await api(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBeLessThan(500);
      expect(OpenAIErrorEnvelopeSchema.safeParse(res.json).success).toBe(true);
    }
    const named = await api('POST', '/v1/agents', { name: 'a\u0000b', model: MODEL });
    expect(named).toMatchObject({ status: 400, json: { error: { param: 'name' } } });
  });

  it('sent over NATS around the typed client, NUL still answers a typed bad_request naming the field', async () => {
    const acct = stack.gateway.key.account_id;
    const raw = async (entry: RpcEntry, data: unknown) => {
      const msg = await stack.rpc.connection.request(wireSubject(entry.subject, stack.prefix), JSON.stringify({ pattern: entry.subject, id: 'raw', data }), { timeout: 30_000 });
      return msg.json<{ response: { error?: { code: string; details?: { param?: string } } } }>().response.error;
    };
    const cases: Array<[RpcEntry, unknown, string]> = [
      [agentRunCatalog.getAgent, { account_id: acct, agent_id: 'agent_\u0000' }, 'agent_id'],
      [agentRunCatalog.getRun, { account_id: acct, run_id: '\u0000' }, 'run_id'],
      [agentRunCatalog.listRuns, { account_id: acct, before: 'x\u0000' }, 'before'],
      [agentRunCatalog.listRuns, { account_id: acct, agent_id: '\u0000' }, 'agent_id'],
      [agentRunCatalog.createAgent, { account_id: acct, tool_level: 'l3_shell', agent: { model: MODEL, name: 'n\u0000' } }, 'agent.name'],
      [agentRunCatalog.createAgent, { account_id: acct, tool_level: 'l3_shell', agent: { model: 'm\u0000' } }, 'agent.model'],
      [agentRunCatalog.createRun, { account_id: acct, agent_id: 'agent_x', tool_level: 'l3_shell', task: 't', idempotency_key: '\u0000' }, 'idempotency_key'],
      [agentRunCatalog.createRun, { account_id: acct, agent_id: 'agent_x', task: 't' }, 'tool_level'],
    ];
    for (const [entry, data, param] of cases) {
      expect(await raw(entry, data), `${entry.subject} ${param}`).toMatchObject({ code: 'bad_request', details: { param } });
    }
  });

  it('a 1 MB task or instructions is refused by the gateway with 400 stating the limit, never a 503 naming a subject', async () => {
    const api = as(stack.gateway.key.api_key);
    const agent = (await api('POST', '/v1/agents', { model: MODEL })).json;
    const task = await api('POST', `/v1/agents/${agent.id}/runs`, { task: 'x'.repeat(1 << 20) });
    expect(task.status).toBe(400);
    expectEnvelope(task.json, 'invalid_task');
    expect(task.json.error.message).toMatch(/50,000/);
    const instructions = await api('POST', '/v1/agents', { model: MODEL, instructions: 'x'.repeat(1 << 20) });
    expect(instructions.status).toBe(400);
    expect(instructions.json.error.param).toBe('instructions');
    for (const res of [task, instructions]) expect(JSON.stringify(res.json)).not.toMatch(/agent-run\.|\.v1/);
  });
});
