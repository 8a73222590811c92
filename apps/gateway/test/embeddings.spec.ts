import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleValue } from '@drael/metrics';
import { freePort, scrapeMetrics } from '@drael/test-support';
import { startLoopHarness, type LoopHarness } from './turn-loop.support.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read freely */

// POST /v1/embeddings: LangChain's, LlamaIndex's and the SDKs' embeddings calls (RAG setups)
// found no route. Proxied to a deployment of the alias, the request checked first.

let h: LoopHarness;
let metricsPort: number;
beforeAll(async () => {
  metricsPort = await freePort();
  h = await startLoopHarness({ models: { embed: { model: 'upstream-embedder' } }, env: { METRICS_PORT: String(metricsPort) } });
}, 180_000);
afterAll(async () => {
  await h?.close();
});

const post = (body: unknown, apiKey: string | null = h.apiKey) =>
  fetch(`${h.gateway.url}/v1/embeddings`, {
    method: 'POST',
    headers: { ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The scripted upstream's vector for an input (test-support's embeddingsAnswer): sha256 bytes mapped to [-1, 1). */
const vectorOf = (text: string, dims = 8) => {
  const d = createHash('sha256').update(text).digest();
  return Array.from({ length: dims }, (_, i) => (d[i % d.length]! - 128) / 128);
};

describe('POST /v1/embeddings', () => {
  it('answers the official SDK (base64 by default, decoded by it) with each input’s vector, from the deployment’s model', async () => {
    const client = new OpenAI({ apiKey: h.apiKey, baseURL: `${h.gateway.url}/v1` });
    const before = h.upstream.requests.length;
    const r = await client.embeddings.create({ model: 'embed', input: ['first text', 'second text'] });
    expect(r.data.map((d) => d.index)).toEqual([0, 1]);
    r.data.forEach((d, i) => d.embedding.forEach((x, j) => expect(x).toBeCloseTo(vectorOf(['first text', 'second text'][i]!)[j]!, 6)));
    expect(r.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    const sent = h.upstream.requests[before]!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toMatchObject({ model: 'upstream-embedder', input: ['first text', 'second text'], encoding_format: 'base64' });
  });

  it('passes floats, token arrays and dimensions through, and names the deployment that served it', async () => {
    const floats = await post({ model: 'embed', input: 'one', encoding_format: 'float', dimensions: 4 });
    expect(floats.status).toBe(200);
    expect(floats.headers.get('x-drael-upstream')).toBeTruthy();
    expect(((await floats.json()) as any).data[0].embedding).toEqual(vectorOf('one', 4));
    const tokens = await post({ model: 'embed', input: [[1, 2, 3], [4]] });
    expect(tokens.status).toBe(200);
    expect(((await tokens.json()) as any).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });

  it('counts the input tokens the deployment reports in the alias’s token series', async () => {
    const read = async () => sampleValue(await scrapeMetrics(`http://127.0.0.1:${metricsPort}`), 'drael_gateway_tokens_total', { alias: 'embed', direction: 'in' });
    const before = await read();
    expect((await post({ model: 'embed', input: 'x'.repeat(40) })).status).toBe(200);
    expect((await read()) - before).toBe(10);
  });

  it.each([
    ['no input', { model: 'embed' }, 'input'],
    ['an empty text', { model: 'embed', input: '' }, 'input'],
    ['an empty list', { model: 'embed', input: [] }, 'input'],
    ['a float among tokens', { model: 'embed', input: [1.5] }, 'input'],
    ['a mixed list', { model: 'embed', input: ['a', [1]] }, 'input'],
    ['more than 2,048 inputs', { model: 'embed', input: Array.from({ length: 2049 }, () => 'x') }, 'input'],
    ['a bad encoding', { model: 'embed', input: 'a', encoding_format: 'hex' }, 'encoding_format'],
    ['a bad dimensions', { model: 'embed', input: 'a', dimensions: 0 }, 'dimensions'],
    ['no model', { input: 'a' }, 'model'],
  ])('refuses %s with a 400 naming the field, and asks no upstream', async (_, body, param) => {
    const before = h.upstream.requests.length;
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error).toMatchObject({ type: 'invalid_request_error', param });
    expect(h.upstream.requests.length).toBe(before);
  });

  it('answers 404 model_not_found for an unknown alias, and 401 without a key', async () => {
    const unknown = await post({ model: 'nope', input: 'a' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error).toMatchObject({ code: 'model_not_found', param: 'model' });
    expect((await post({ model: 'embed', input: 'a' }, null)).status).toBe(401);
  });
});
