import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '@drael/test-support';
import { MODEL, NATS_URL, startStack, type Stack } from './harness.js';

// Issue 19, item 3: an agent run's model call reaches only a gateway that serves its alias. Two
// gateways on the bus: the stack's serves the agents' alias, the other serves another alias only.
// Before routed subjects, about half the calls landed on the other one and the run ended
// `model_not_found`.

const text = (content: string) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 } });
const RUNS = 8;
let stack: Stack;
let other: GatewayProcess;

beforeAll(async () => {
  stack = await startStack();
  other = await startGatewayProcess(
    {
      NATS_URL,
      DRAEL_NATS_PREFIX: stack.prefix,
      LOG_LEVEL: 'warn',
      DRAEL_MODELS: JSON.stringify({ 'another-model': { base_url: stack.upstream.baseUrl, model: 'scripted' } }),
      DRAEL_BACKEND_SERVICES: 'agent-run',
    },
    { billing: false },
  );
}, 180_000);

afterAll(async () => {
  await other?.stop('SIGKILL');
  await stack?.stop();
});

describe('inference routing by model alias', () => {
  it('sends every model call to a gateway that serves the alias, and fails closed (model_not_found) when none does', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct);
    stack.upstream.setTurns(Array.from({ length: RUNS }, (_, i) => text(`answer ${i}`)));
    for (let i = 0; i < RUNS; i++) {
      const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: `task ${i}` });
      const run = await stack.waitForRun(acct, created.id);
      expect(run.status, JSON.stringify(run)).toBe('succeeded');
    }

    // The only gateway with the alias gone, and a run begins: it waits for one to be back (a
    // restart, a rolling update) rather than failing model_not_found at once, as it did (attack
    // pass 3: failed 4.6 s after the kill, before the gateway was back).
    await stack.gateway.stop('SIGKILL');
    stack.upstream.setTurns([text('answered once a gateway is back')]);
    const during = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'while the gateway restarts' });
    await new Promise((r) => setTimeout(r, 1_000));
    const again = await startGatewayProcess(
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: stack.prefix,
        LOG_LEVEL: 'warn',
        DRAEL_MODELS: JSON.stringify({ [MODEL]: { base_url: stack.upstream.baseUrl, model: 'scripted' } }),
        DRAEL_BACKEND_SERVICES: 'agent-run',
      },
      { billing: false },
    );
    const survived = await stack.waitForRun(acct, during.id);
    expect(survived.status, JSON.stringify(survived)).toBe('succeeded');
    expect(stack.upstream.requests.length).toBe(RUNS + 1);

    // Gone for good (longer than AGENT_RUN_INFERENCE_UNSERVED_WAIT_MS): the other gateway never
    // answers for the alias; the run ends typed.
    await again.stop('SIGKILL');
    stack.upstream.setTurns([text('never reached')]);
    const created = await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'no gateway for my alias' });
    const run = await stack.waitForRun(acct, created.id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'model_not_found', message: expect.stringContaining('for 20 s') });
    expect(stack.upstream.requests.length).toBe(RUNS + 1);
  }, 300_000);
});
