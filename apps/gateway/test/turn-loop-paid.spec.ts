/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { startLoopHarness, toolMessages, toolNames, type LoopHarness } from './turn-loop.support.js';

// Paid tools: the providers are outside Drael, so they are test doubles on a real socket (an
// OpenAI-compatible images endpoint, a breach provider, a contact provider); credit is held,
// settled and released by the REAL billing service.
interface ProviderCall {
  path: string;
  body: any;
  auth: string | undefined;
}
let provider: Server;
let providerUrl: string;
const providerCalls: ProviderCall[] = [];
let h: LoopHarness;
const ask = [{ role: 'user', content: 'Do the paid thing.' }];
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

beforeAll(async () => {
  provider = createServer((req, res) => {
    void readBody(req).then(async (body) => {
      providerCalls.push({ path: req.url ?? '', body, auth: req.headers.authorization });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const text = String(body.prompt ?? body.query ?? '');
      if (text.includes('slow')) await new Promise((r) => setTimeout(r, 8_000));
      if (res.destroyed) return;
      if (text.includes('broken')) return json(500, { error: { message: 'provider is down' } });
      if (req.url === '/v1/images/generations') return json(200, { data: [{ url: `https://images.example/${providerCalls.length}.png` }] });
      // 10,000 arrays one inside the next (20 KB): walking it overflowed the stack, a 500 for the request.
      if (req.url === '/breach' && text.includes('deep')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"results":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
      }
      if (req.url === '/breach') return json(200, { results: text.includes('nobody') ? [] : [{ name: 'ExampleLeak', date: '2024-01-01' }] });
      if (req.url === '/contacts') {
        const n = Math.min(Number(body.limit ?? 5), text.includes('many') ? 100 : 3);
        return json(200, { contacts: Array.from({ length: n }, (_, i) => ({ name: `Person ${i}`, email: `p${i}@example.com`, premium: text.includes('many') || i === 0 })) });
      }
      json(404, { error: 'no route' });
    });
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  h = await startLoopHarness({
    env: {
      DRAEL_IMAGE_PROVIDER: JSON.stringify({ base_url: `${providerUrl}/v1`, api_key: 'sk-img', model: 'img-1' }),
      DRAEL_BREACH_PROVIDER: JSON.stringify({ url: `${providerUrl}/breach`, api_key: 'sk-breach' }),
      DRAEL_CONTACT_PROVIDER: JSON.stringify({ url: `${providerUrl}/contacts` }),
    },
  });
}, 240_000);
afterAll(async () => {
  await h?.close();
  provider?.closeAllConnections();
  await new Promise((r) => provider?.close(r));
}, 60_000);

async function round(calls: ReturnType<typeof call>[], apiKey = h.apiKey) {
  h.script([
    { type: 'tool_calls', calls },
    { type: 'text', content: 'done' },
  ]);
  const before = h.upstream.requests.length;
  const r = await h.chat({ messages: ask }, { authorization: `Bearer ${apiKey}` });
  expect(r.status).toBe(200);
  await r.json();
  const seen = h.upstream.requests.slice(before);
  expect(seen).toHaveLength(2);
  return { results: toolMessages(seen[1]!.body).map((m) => m.content) };
}

const usage = (account_id: string) => h.nats.request(billingCatalog.usage, { account_id });

describe('paid tools', () => {
  it('are served when their provider is configured and billing answers', async () => {
    h.script([{ type: 'text', content: 'hi' }]);
    const before = h.upstream.requests.length;
    await (await h.chat({ messages: ask })).json();
    expect(toolNames(h.upstream.requests[before]!.body)).toEqual(['generate_image', 'breach_lookup', 'contact_lookup', 'spawn_agent']);
  });

  it('generate_image: held, run at the provider, settled as one image', async () => {
    const key = await h.newKey({ plan: 'pro' });
    const { results } = await round([call('i1', 'generate_image', { prompt: 'a red bicycle' })], key.api_key);
    expect(results[0]).toMatchObject({ ok: true, url: expect.stringMatching(/^https:\/\/images\.example\//) });
    const seen = providerCalls.at(-1)!;
    expect(seen).toMatchObject({ path: '/v1/images/generations', auth: 'Bearer sk-img', body: { model: 'img-1', prompt: 'a red bicycle', n: 1 } });
    expect((await usage(key.account_id)).allowances.images).toMatchObject({ used: 1, held: 0 });
  });

  it('plan_required: the tool does not run, the model is told plainly, nothing is charged', async () => {
    const key = await h.newKey({ plan: 'free' });
    const calls = providerCalls.length;
    const { results } = await round([call('b1', 'breach_lookup', { query: 'someone@example.com' })], key.api_key);
    expect(results[0]).toMatchObject({ ok: false, error: 'plan_required' });
    expect(results[0].why).toMatch(/did not run/);
    expect(providerCalls.length).toBe(calls);
    expect((await usage(key.account_id)).allowances.lookups).toMatchObject({ used: 0, held: 0 });
  });

  it('contact_lookup is metered per contact returned, a premium contact counting double', async () => {
    const key = await h.newKey({ plan: 'pro' });
    const { results } = await round([call('c1', 'contact_lookup', { query: 'Ada Lovelace' })], key.api_key);
    expect(results[0].ok).toBe(true);
    expect(results[0].contacts).toHaveLength(3);
    // 3 contacts, the first premium: 2 + 1 + 1.
    expect((await usage(key.account_id)).allowances.lookups).toMatchObject({ used: 4, held: 0 });
  });

  it('empty is found:false (and the lookup that ran counts); a provider failure is ok:false and released', async () => {
    const key = await h.newKey({ plan: 'pro' });
    const { results } = await round([call('e', 'breach_lookup', { query: 'nobody@example.com' }), call('f', 'breach_lookup', { query: 'broken@example.com' })], key.api_key);
    expect(results[0]).toMatchObject({ ok: true, found: false });
    expect(results[0].note).toMatch(/queried/);
    expect(results[1]).toMatchObject({ ok: false, error: 'provider_error' });
    expect(results[1].why).toMatch(/provider is down/);
    expect((await usage(key.account_id)).allowances.lookups).toMatchObject({ used: 1, held: 0 });
  });

  it('a provider answer nested deeper than any JSON Drael accepts is a bad answer the model is told of, not a 500', async () => {
    const key = await h.newKey({ plan: 'pro' });
    const { results } = await round([call('d', 'breach_lookup', { query: 'deep@example.com' })], key.api_key);
    expect(results[0]).toMatchObject({ ok: false, error: 'provider_bad_answer' });
    expect(results[0].why).toMatch(/nested deeper than 64/);
    expect((await usage(key.account_id)).allowances.lookups).toMatchObject({ held: 0 });
  });

  it('weekly_allowance_reached comes back to the model as ok:false with the reason', async () => {
    const key = await h.newKey({ plan: 'pro' });
    // Each call holds 20 contacts at the premium rate (40 units): the third passes the week's 100.
    const { results } = await round(
      [1, 2, 3].map((i) => call(`w${i}`, 'contact_lookup', { query: `many people ${i}`, limit: 20 })),
      key.api_key,
    );
    const refused = results.filter((r) => r.ok === false);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ error: 'weekly_allowance_reached' });
    expect(refused[0].why).toMatch(/did not run/);
    expect((await usage(key.account_id)).allowances.lookups).toMatchObject({ used: 80, held: 0 });
  });

  it('a key revoked mid-request runs no more tools and no more turns: the request fails invalid_api_key', async () => {
    const key = await h.newKey({ plan: 'pro' });
    // The first turn answers after 7 s, past the gateway's 5 s trust in the key's verdict, asking
    // for a paid tool; the key is revoked meanwhile.
    h.script([
      { type: 'tool_calls', calls: [call('r', 'generate_image', { prompt: 'after revocation' })], headersDelayMs: 7_000 },
      { type: 'text', content: 'never' },
    ]);
    const calls = providerCalls.length;
    const turns = h.upstream.requests.length;
    const pending = h.chat({ messages: ask }, { authorization: `Bearer ${key.api_key}` });
    await expect.poll(() => h.upstream.requests.length, { timeout: 10_000 }).toBe(turns + 1);
    await h.nats.request(billingCatalog.revokeKey, { account_id: key.account_id, key_id: key.key_id });
    const r = await pending;
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: { code: 'invalid_api_key' } });
    expect(providerCalls.length).toBe(calls);
    expect(h.upstream.requests.length).toBe(turns + 1);
    expect((await usage(key.account_id)).allowances.images).toMatchObject({ used: 0, held: 0 });
  });

  it('a client that disconnects mid-call: the provider call runs to its answer and the attempt is charged', async () => {
    const key = await h.newKey({ plan: 'pro' });
    h.script([
      { type: 'tool_calls', calls: [call('s', 'generate_image', { prompt: 'slow sunset' })] },
      { type: 'text', content: 'never' },
    ]);
    const calls = providerCalls.length;
    const ac = new AbortController();
    const pending = h.chat({ messages: ask, stream: true }, { authorization: `Bearer ${key.api_key}` }, ac.signal).catch(() => undefined);
    await expect.poll(() => providerCalls.length, { timeout: 10_000 }).toBe(calls + 1);
    await expect.poll(async () => (await usage(key.account_id)).allowances.images.held, { timeout: 5_000 }).toBe(1);
    ac.abort();
    await pending;
    // The provider had the request (it takes 8 s to answer here): it made, and billed, the image.
    // Before, the hang-up cut the call and released the hold: any number of attempts on one unit.
    await expect.poll(async () => (await usage(key.account_id)).allowances.images, { timeout: 20_000 }).toMatchObject({ held: 0, used: 1 });
    expect(providerCalls.length).toBe(calls + 1);
  });
});
