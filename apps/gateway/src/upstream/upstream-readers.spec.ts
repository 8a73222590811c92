import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '@drael/test-support';
import { configSchema } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { ModelRegistry } from '../models/model-registry.js';
import { ModelRouter } from './model-router.service.js';
import { UpstreamClient } from './upstream.client.js';

// issue 20: the loops read their model turns on undici's raw dispatch (UpstreamClient.read and
// readStream) instead of a Readable body. These are the readers' own rules, against the scripted
// upstream on a real socket: a streamed answer is held while its reader is busy and resumed in
// order; a reader that fails stops the answer; the caller's abort stops it too.
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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const contentOf = (sse: string) =>
  sse
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => (JSON.parse(l.slice(6)) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? '')
    .join('');

describe('UpstreamClient.readStream', () => {
  it('holds the answer while the reader is busy, then hands on every chunk in order', async () => {
    const pieces = Array.from({ length: 30 }, (_, i) => `piece${i} `);
    // One chunk every 5 ms: the answer comes in many reads, all written within about 150 ms.
    upstream.setTurns([{ type: 'text', content: pieces, chunkDelayMs: 5 }]);
    const seen: string[] = [];
    let release!: () => void;
    const busy = new Promise<void>((r) => (release = r));
    let accepted = '';
    const done = client.readStream(route(), call(new AbortController().signal, true), {
      onAccepted: (d) => (accepted = d.name),
      onChunk: (chunk) => {
        seen.push(chunk.toString('utf8'));
        // The first read keeps the reader busy until released; every later one is taken at once.
        if (seen.length === 1) return busy;
      },
    });
    // The upstream has written its whole answer long before this; none of it may reach a busy reader.
    await sleep(400);
    expect(seen).toHaveLength(1);
    release();
    const deployment = await done;
    expect(deployment.name).toBe(accepted);
    expect(contentOf(seen.join(''))).toBe(pieces.join(''));
  });

  it('a reader that throws stops the answer with its error: the upstream sees its answer aborted', async () => {
    upstream.setTurns([{ type: 'text', content: Array.from({ length: 20 }, (_, i) => `t${i}`), chunkDelayMs: 50 }]);
    const abortedBefore = upstream.aborted.length;
    const failure = new ApiError('upstream_error', 'the reader gave up');
    let chunks = 0;
    const done = client.readStream(route(), call(new AbortController().signal, true), {
      onChunk: () => {
        if (++chunks === 2) throw failure;
      },
    });
    await expect(done).rejects.toBe(failure);
    await expect.poll(() => upstream.aborted.length, { timeout: 5_000 }).toBe(abortedBefore + 1);
    expect(chunks).toBe(2);
  });
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
