import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '@drael/test-support';
import { configSchema } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { ModelRegistry } from '../models/model-registry.js';
import { ModelRouter } from './model-router.service.js';
import { UpstreamClient } from './upstream.client.js';

// issue 20: the loops read a non-streamed model turn (and inference its answer) on undici's raw
// dispatch (UpstreamClient.read) instead of a Readable body. Its own rules, against the scripted
// upstream on a real socket: the whole answer and its deployment, the caller's abort, an error answer.
let upstream: ScriptedUpstream;
let registry: ModelRegistry;
let client: UpstreamClient;
let router: ModelRouter;

beforeAll(async () => {
  upstream = await startScriptedUpstream({ turns: [] });
  const config = configSchema.parse({ DRAEL_MODELS: JSON.stringify({ m: { base_url: upstream.baseUrl, model: 'm' } }) });
  registry = new ModelRegistry(config);
  // Redis is reached only in onModuleInit, not called here: the cooldowns stay in memory.
  router = new ModelRouter(registry, config);
  client = new UpstreamClient(config, router);
});
afterAll(async () => {
  await client?.onApplicationShutdown();
  await router?.onApplicationShutdown();
  await upstream?.close();
});

const route = () => registry.resolve('m');
const call = (signal: AbortSignal, stream: boolean) => ({
  path: '/chat/completions',
  bodyFor: (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'q' }], stream }),
  requestId: 'req-readers',
  signal,
  accept: stream ? 'text/event-stream' : 'application/json',
});
describe('UpstreamClient.read', () => {
  it('gives the whole answer and its deployment', async () => {
    upstream.setTurns([{ type: 'text', content: 'whole answer' }]);
    const answer = await client.read(route(), call(new AbortController().signal, false));
    expect((JSON.parse(answer.text) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('whole answer');
    expect(answer.deployment.alias).toBe('m');
  });

  it("the caller's abort stops the call in flight and rejects with the abort's reason", async () => {
    upstream.setTurns([{ type: 'text', content: 'late', headersDelayMs: 2_000 }]);
    const abortedBefore = upstream.aborted.length;
    const ac = new AbortController();
    const requestsBefore = upstream.requests.length;
    const done = client.read(route(), call(ac.signal, false));
    await upstream.waitForRequests(requestsBefore + 1);
    const reason = new Error('client gone');
    ac.abort(reason);
    await expect(done).rejects.toBe(reason);
    await expect.poll(() => upstream.aborted.length, { timeout: 5_000 }).toBe(abortedBefore + 1);
  });

  it("an upstream's error answer is its typed error, as the proxy's", async () => {
    upstream.setTurns([{ type: 'error', status: 400, message: 'bad things', code: 'invalid_value' }]);
    const err = await client.read(route(), call(new AbortController().signal, false)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid_value', status: 400, message: 'bad things' });
  });
});
