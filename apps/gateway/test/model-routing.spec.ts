/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are probed field by field */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayCatalog } from '@drael/contracts';
import { NatsRpcClient, RpcError } from '@drael/nats-rpc';
import { freePort, parseSse, startGatewayProcess, startScriptedUpstream, testPrefix, type GatewayProcess, type ScriptedTurn, type ScriptedUpstream } from '@drael/test-support';

const ADMIN_TOKEN = 'admin-token-for-routing-tests-0123456789';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const hello = [{ role: 'user', content: 'hello' }];
const ok = (content: string): ScriptedTurn => ({ type: 'text', content, usage: { prompt_tokens: 10, completion_tokens: 4 } });
const serverError: ScriptedTurn = { type: 'error', status: 500, message: 'boom' };

const upstreams: ScriptedUpstream[] = [];
/** One scripted upstream per deployment, answering its script's last turn again once it runs out. */
async function upstream(...turns: ScriptedTurn[]): Promise<ScriptedUpstream> {
  const u = await startScriptedUpstream({ turns, whenExhausted: 'repeat' });
  upstreams.push(u);
  return u;
}

const prefix = testPrefix('route');
let gateway: GatewayProcess;
let replica: GatewayProcess;
let nats: NatsRpcClient;
let deadPort: number;
const u: Record<string, ScriptedUpstream> = {};

const dep = (name: string, up: ScriptedUpstream, over: Record<string, unknown> = {}) => ({ name, base_url: up.baseUrl, model: `${name}-model`, ...over });

beforeAll(async () => {
  deadPort = await freePort();
  u.r500a = await upstream(serverError);
  u.r500b = await upstream(ok('from b'));
  u.slowA = await upstream({ ...ok('too late'), headersDelayMs: 5_000 });
  u.slowB = await upstream(ok('in time'));
  u.r429a = await upstream({ type: 'error', status: 429, message: 'slow down', headers: { 'retry-after': '120' } });
  u.r429b = await upstream(ok('from the other one'));
  u.groupA1 = await upstream({ type: 'error', status: 503, message: 'unavailable' });
  u.groupB = await upstream(ok('next group'));
  u.dropA = await upstream({ type: 'drop', content: ['first ', 'second'], afterChunks: 2 });
  u.dropB = await upstream(ok('must not be asked'));
  u.rpmA = await upstream(ok('a'));
  u.rpmB = await upstream(ok('b'));
  u.boundA = await upstream(serverError);
  u.boundB = await upstream(serverError);
  u.boundC = await upstream(ok('never reached'));
  u.ctxSmall = await upstream({ type: 'error', status: 400, message: 'too long', code: 'context_length_exceeded' });
  u.ctxBig = await upstream(ok('the big one'));
  u.loopA = await upstream(serverError);
  u.loopB = await upstream(ok('turn loop answer'));
  u.respA = await upstream({ type: 'error', status: 502, message: 'bad gateway' });
  u.respB = await upstream(ok('responses answer'));
  u.infA = await upstream(serverError);
  u.infB = await upstream(ok('inference answer'));
  // A deployment whose own key the provider refuses: its envelope's code is one the gateway has too.
  u.infKey = await upstream({ type: 'error', status: 401, message: 'Incorrect API key provided', code: 'invalid_api_key' });
  u.sharedA = await upstream(serverError);
  u.sharedB = await upstream(ok('shared b'));
  u.loop429 = await upstream({ type: 'error', status: 429, message: 'provider busy', headers: { 'retry-after': '9' } });
  u.priceA = await upstream(serverError);
  u.priceB = await upstream(ok('priced'));
  // A deployment that takes the output limit only as max_completion_tokens (OpenAI's reasoning
  // models refuse max_tokens), failing so that the next one, which keeps max_tokens, answers.
  for (const mode of ['Chat', 'Resp', 'Inf']) {
    u[`limit${mode}A`] = await upstream(serverError);
    u[`limit${mode}B`] = await upstream(ok('limited'));
  }

  const env = {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'billing',
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: '3000',
    // /readyz names the deployments' states to the operator only.
    DRAEL_ADMIN_TOKEN: ADMIN_TOKEN,
    // One failure cools a deployment: the cooldown tests need no repeated failures.
    ROUTER_FAILURES_TO_COOL: '1',
    ROUTER_COOLDOWN_MS: '600000',
    DRAEL_MODELS: JSON.stringify({
      r500: { deployments: [dep('r500-a', u.r500a), dep('r500-b', u.r500b, { priority: 1 })] },
      slow: { deployments: [dep('slow-a', u.slowA, { headers_timeout_ms: 300 }), dep('slow-b', u.slowB, { priority: 1 })] },
      r429: { deployments: [dep('r429-a', u.r429a), dep('r429-b', u.r429b, { priority: 1 })] },
      groups: {
        deployments: [dep('groups-a1', u.groupA1), { name: 'groups-a2', base_url: `http://127.0.0.1:${deadPort}/v1`, model: 'x' }, dep('groups-b', u.groupB, { priority: 1 })],
      },
      drop: { deployments: [dep('drop-a', u.dropA), dep('drop-b', u.dropB, { priority: 1 })] },
      rpm: { deployments: [dep('rpm-a', u.rpmA, { rpm: 2 }), dep('rpm-b', u.rpmB, { priority: 1 })] },
      bounded: { max_attempts: 2, deployments: [dep('bound-a', u.boundA), dep('bound-b', u.boundB, { priority: 1 }), dep('bound-c', u.boundC, { priority: 2 })] },
      small: { context_fallback: 'big', deployments: [dep('ctx-small', u.ctxSmall)] },
      big: { deployments: [dep('ctx-big', u.ctxBig)] },
      loop: { deployments: [dep('loop-a', u.loopA), dep('loop-b', u.loopB, { priority: 1 })] },
      resp: { deployments: [dep('resp-a', u.respA), dep('resp-b', u.respB, { priority: 1 })] },
      inf: { deployments: [dep('inf-a', u.infA), dep('inf-b', u.infB, { priority: 1 })] },
      'inf-key': { deployments: [dep('inf-key', u.infKey)] },
      shared: { deployments: [dep('shared-a', u.sharedA), dep('shared-b', u.sharedB, { priority: 1 })] },
      // The single-upstream form, as every existing configuration writes it.
      'loop-429': { base_url: u.loop429.baseUrl, model: 'm' },
      ...Object.fromEntries(
        ['Chat', 'Resp', 'Inf'].map((mode) => [
          `limit-${mode.toLowerCase()}`,
          {
            deployments: [dep(`limit-${mode}-a`, u[`limit${mode}A`]!, { max_tokens_param: 'max_completion_tokens' }), dep(`limit-${mode}-b`, u[`limit${mode}B`]!, { priority: 1 })],
          },
        ]),
      ),
      priced: { input_per_1m: 1, output_per_1m: 1, deployments: [dep('priced-a', u.priceA), dep('priced-b', u.priceB, { priority: 1, input_per_1m: 2 })] },
    }),
  };
  gateway = await startGatewayProcess(env, { readyTimeoutMs: 90_000 });
  // A second replica of the same installation (same NATS prefix, same Redis), sharing gateway's billing.
  replica = await startGatewayProcess(env, { readyTimeoutMs: 90_000, billing: false });
  nats = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  // A cold billing can miss the first key check's deadline: warm it before the tests count on it.
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${gateway.url}/v1/models`, { headers: gateway.authHeaders });
    if (r.status === 200) break;
    await new Promise((res) => setTimeout(res, 250));
  }
}, 180_000);

afterAll(async () => {
  await nats?.close();
  await replica?.stop();
  await gateway?.stop();
  await Promise.all(upstreams.map((x) => x.close()));
});

const chat = (g: GatewayProcess, body: Record<string, unknown>, headers: Record<string, string> = { 'x-drael-server-tools': '0' }) =>
  fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...gateway.authHeaders, ...headers },
    body: JSON.stringify({ messages: hello, ...body }),
  });

async function readiness(g: GatewayProcess): Promise<{ status: number; body: any }> {
  const r = await fetch(`${g.url}/readyz`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: r.status, body: await r.json() };
}

describe("model routing over an alias's deployments (proxy mode)", () => {
  it('a 500 is retried on the next deployment; the answer names the one that served it', async () => {
    const r = await chat(gateway, { model: 'r500' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('r500-b');
    expect(((await r.json()) as any).choices[0].message.content).toBe('from b');
    expect(u.r500a!.requests).toHaveLength(1);
    expect(u.r500b!.requests).toHaveLength(1);
    // Each deployment gets its own upstream model name.
    expect(u.r500a!.requests[0]!.body.model).toBe('r500-a-model');
    expect(u.r500b!.requests[0]!.body.model).toBe('r500-b-model');
  });

  it("no headers within the deployment's timeout: retried on the next deployment", async () => {
    const r = await chat(gateway, { model: 'slow', stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('slow-b');
    const events = parseSse(await r.text()) as any[];
    expect(events.at(-1)).toBe('[DONE]');
    expect(
      events
        .filter((e) => e !== '[DONE]')
        .map((e) => e.choices[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('in time');
    expect(u.slowA!.requests).toHaveLength(1);
  });

  it('a 429 with Retry-After is retried elsewhere, and the deployment is cooled for that long', async () => {
    const r = await chat(gateway, { model: 'r429' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('r429-b');
    const { status, body } = await readiness(gateway);
    // A cooled deployment never makes the gateway unready.
    expect(status).toBe(200);
    expect(body.deployments['r429-a']).toMatchObject({ state: 'cooling', reason: 'rate_limited' });
    const until = Date.parse(body.deployments['r429-a'].cooling_until);
    // Retry-After: 120 s (the cooldown default here is 600 s, so this is the header's).
    expect(until - Date.now()).toBeGreaterThan(60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(120_000);
    // While cooled, requests go straight to the other deployment.
    const again = await chat(gateway, { model: 'r429' });
    expect(again.headers.get('x-drael-upstream')).toBe('r429-b');
    expect(u.r429a!.requests).toHaveLength(1);
    expect(u.r429b!.requests).toHaveLength(2);
  });

  it('a whole priority group out (a 503 and a refused connection) falls back to the next group', async () => {
    const r = await chat(gateway, { model: 'groups' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('groups-b');
    expect(u.groupA1!.requests).toHaveLength(1);
    const { body } = await readiness(gateway);
    expect(body.deployments['groups-a1']).toMatchObject({ state: 'cooling', reason: 'server_error' });
    expect(body.deployments['groups-a2']).toMatchObject({ state: 'cooling', reason: 'connect' });
  });

  it('attempts are bounded (max_attempts 2): the last failure is the answer', async () => {
    const r = await chat(gateway, { model: 'bounded' });
    expect(r.status).toBe(502);
    expect(r.headers.get('x-drael-upstream')).toBe('bound-b');
    expect(((await r.json()) as any).error.message).toBe('The model upstream failed (bound-b: 500)');
    expect(u.boundA!.requests).toHaveLength(1);
    expect(u.boundB!.requests).toHaveLength(1);
    expect(u.boundC!.requests).toHaveLength(0);
  });

  it('a stream dropped after its first chunks is not retried: the stream ends with a typed error event', async () => {
    const r = await chat(gateway, { model: 'drop', stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('drop-a');
    const events = parseSse(await r.text()) as any[];
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1).error).toMatchObject({ code: expect.stringMatching(/^upstream_/) });
    expect(events).not.toContain('[DONE]');
    expect(u.dropB!.requests).toHaveLength(0);
  });

  it('a deployment at its rpm limit is skipped, not hit', async () => {
    const served: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await chat(gateway, { model: 'rpm' });
      expect(r.status).toBe(200);
      served.push(r.headers.get('x-drael-upstream')!);
    }
    expect(served).toEqual(['rpm-a', 'rpm-a', 'rpm-b']);
    expect(u.rpmA!.requests).toHaveLength(2);
  });

  it('context_length_exceeded falls back to the alias configured for it', async () => {
    const r = await chat(gateway, { model: 'small' });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('ctx-big');
    expect(u.ctxBig!.requests[0]!.body.model).toBe('ctx-big-model');
    // A request's own fault does not cool the deployment.
    const { body } = await readiness(gateway);
    expect(body.deployments['ctx-small'].state).toBe('healthy');
  });
});

describe('every mode routes through the same client', () => {
  it('catalogue turn loop: a 500 on the first turn is retried on the next deployment', async () => {
    const r = await chat(gateway, { model: 'loop' }, {});
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('loop-b');
    expect(((await r.json()) as any).choices[0].message.content).toBe('turn loop answer');
    expect(u.loopA!.requests).toHaveLength(1);
  });

  it('turn loop with a single upstream: its 429 reaches the client as upstream_rate_limited with its Retry-After', async () => {
    const r = await chat(gateway, { model: 'loop-429' }, {});
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('9');
    expect(r.headers.get('x-drael-upstream')).toBe('loop-429');
    expect(((await r.json()) as any).error).toMatchObject({ code: 'upstream_rate_limited', type: 'rate_limit_error', message: expect.stringContaining('loop-429') });
    // One deployment: nowhere else to go, no second attempt.
    expect(u.loop429!.requests).toHaveLength(1);
  });

  it('Responses: a 502 is retried on the next deployment', async () => {
    const r = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gateway.authHeaders },
      body: JSON.stringify({ model: 'resp', input: 'hello' }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('resp-b');
    const body = (await r.json()) as any;
    expect(body.status).toBe('completed');
    expect(JSON.stringify(body.output)).toContain('responses answer');
    expect(u.respA!.requests).toHaveLength(1);
    expect(u.respB!.requests).toHaveLength(1);
  });

  it('inference for agent runs (NATS): a 500 is retried on the next deployment, and the reply names the one that served', async () => {
    const reply = await nats.request(gatewayCatalog.inferenceChat, {
      account_id: gateway.key!.account_id,
      model: 'inf',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 50,
    });
    expect(reply.message.content).toBe('inference answer');
    // The reply names the deployment that served it (the one after the failed one), as x-drael-upstream does on HTTP.
    expect(reply.deployment).toBe('inf-b');
    expect(u.infA!.requests).toHaveLength(1);
    expect(u.infB!.requests).toHaveLength(1);
  });
});

describe('the output limit under the name each deployment takes (max_tokens_param)', () => {
  // The first deployment of each alias takes max_completion_tokens and fails; the next, with the default, answers.
  const limitOf = (body: any) => ({ max_tokens: body.max_tokens, max_completion_tokens: body.max_completion_tokens });

  it('Responses: max_output_tokens reaches a max_completion_tokens deployment under that name, the next deployment as max_tokens', async () => {
    const r = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...gateway.authHeaders },
      body: JSON.stringify({ model: 'limit-resp', input: 'hello', max_output_tokens: 50, store: false }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-drael-upstream')).toBe('limit-Resp-b');
    expect(limitOf(u.limitRespA!.requests[0]!.body)).toEqual({ max_tokens: undefined, max_completion_tokens: 50 });
    expect(limitOf(u.limitRespB!.requests[0]!.body)).toEqual({ max_tokens: 50, max_completion_tokens: undefined });
  });

  it("catalogue mode: the client's max_tokens (or max_completion_tokens) goes under the deployment's name; a deployment without the setting gets the body as the client wrote it", async () => {
    const r = await chat(gateway, { model: 'limit-chat', max_tokens: 40 }, {});
    expect(r.status).toBe(200);
    expect(limitOf(u.limitChatA!.requests[0]!.body)).toEqual({ max_tokens: undefined, max_completion_tokens: 40 });
    expect(limitOf(u.limitChatB!.requests[0]!.body)).toEqual({ max_tokens: 40, max_completion_tokens: undefined });
    // The first deployment is cooling now: the next request goes to the one without the setting, as written.
    const again = await chat(gateway, { model: 'limit-chat', max_completion_tokens: 30 }, {});
    expect(again.status).toBe(200);
    expect(limitOf(u.limitChatB!.requests[1]!.body)).toEqual({ max_tokens: undefined, max_completion_tokens: 30 });
  });

  it('inference for agent runs: max_tokens under the deployment’s name', async () => {
    const reply = await nats.request(gatewayCatalog.inferenceChat, {
      account_id: gateway.key!.account_id,
      model: 'limit-inf',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 20,
    });
    expect(reply.deployment).toBe('limit-Inf-b');
    expect(limitOf(u.limitInfA!.requests[0]!.body)).toEqual({ max_tokens: undefined, max_completion_tokens: 20 });
    expect(limitOf(u.limitInfB!.requests[0]!.body)).toEqual({ max_tokens: 20, max_completion_tokens: undefined });
  });
});

describe('inference errors (NATS): only the codes the subject declares', () => {
  const infer = (model: string) =>
    nats.request(gatewayCatalog.inferenceChat, { account_id: gateway.key!.account_id, model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 }).then(
      () => expect.fail('the call should have failed'),
      (err: unknown) => err as RpcError,
    );

  it("a deployment's refused key travels as upstream_error (not the caller's invalid_api_key), without the upstream's words", async () => {
    const err = await infer('inf-key');
    expect(err).toBeInstanceOf(RpcError);
    expect({ code: err.code, retryable: err.retryable }).toEqual({ code: 'upstream_error', retryable: true });
    expect(err.message).not.toContain('Incorrect API key');
    expect(gatewayCatalog.inferenceChat.errors).not.toContain('invalid_api_key');
  });

  it('an alias the gateway does not serve is model_not_found', async () => {
    const err = await infer('no-such-alias');
    expect({ code: err.code, retryable: err.retryable, param: err.details?.param }).toEqual({ code: 'model_not_found', retryable: false, param: 'model' });
  });
});

describe('cooldowns shared by every replica', () => {
  it('a deployment cooled by one gateway process is skipped by another (one Redis)', async () => {
    const r = await chat(gateway, { model: 'shared' });
    expect(r.headers.get('x-drael-upstream')).toBe('shared-b');
    expect(u.sharedA!.requests).toHaveLength(1);
    // The replica hears of it over Redis (pub/sub, or its periodic re-read).
    let state = '';
    for (let i = 0; i < 100 && state !== 'cooling'; i++) {
      state = (await readiness(replica)).body.deployments['shared-a'].state;
      if (state !== 'cooling') await new Promise((res) => setTimeout(res, 100));
    }
    expect(state).toBe('cooling');
    const onReplica = await chat(replica, { model: 'shared' });
    expect(onReplica.status).toBe(200);
    expect(onReplica.headers.get('x-drael-upstream')).toBe('shared-b');
    // The replica never asked the cooled deployment.
    expect(u.sharedA!.requests).toHaveLength(1);
    expect((await readiness(replica)).body.deployments['shared-a'].attempts).toBe(0);
  });
});

describe('accounting', () => {
  it('usage is counted for the deployment that served, not the one that failed', async () => {
    const r = await chat(gateway, { model: 'priced' }, {});
    expect(r.status).toBe(200);
    const { body } = await readiness(gateway);
    expect(body.deployments['priced-b']).toMatchObject({ prompt_tokens: 10, completion_tokens: 4, successes: 1 });
    expect(body.deployments['priced-a']).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, successes: 0, failures: { server_error: 1 } });
  });
});
