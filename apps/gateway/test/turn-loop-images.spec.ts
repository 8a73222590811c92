/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are free-form JSON read by the assertions */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog, MAX_FILE_TRANSFER_BYTES } from '@drael/contracts';
import { requestWorkspaces, startLoopHarness, toolMessages, type LoopHarness } from './turn-loop.support.js';

// generate_image against an images provider that answers inline (b64_json), as many do: the
// image is kept as a file in the request's workspace (the REAL sandbox), never as base64 in the
// model's context. The provider is a test double on a real socket; billing is the real service.
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const small = Buffer.concat([PNG_HEAD, randomBytes(20_000)]);
// Larger than one NATS message: written in pieces.
const large = Buffer.concat([PNG_HEAD, randomBytes(2 * MAX_FILE_TRANSFER_BYTES + 12_345)]);
let provider: Server;
let h: LoopHarness;
const ask = [{ role: 'user', content: 'Draw it.' }];
const call = (id: string, name: string, args: unknown) => ({ id, name, arguments: JSON.stringify(args) });

beforeAll(async () => {
  provider = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { prompt: string };
      const image = body.prompt.includes('large') ? large : small;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ b64_json: image.toString('base64'), revised_prompt: `revised: ${body.prompt}` }] }));
    });
  });
  await new Promise<void>((r) => provider.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
  h = await startLoopHarness({ services: ['sandbox'], env: { DRAEL_IMAGE_PROVIDER: JSON.stringify({ base_url: `${url}/v1`, model: 'img-1' }) } });
}, 240_000);
afterAll(async () => {
  await h?.close();
  provider?.closeAllConnections();
  await new Promise((r) => provider?.close(r));
}, 60_000);

describe('inline images from generate_image', () => {
  it('with X-Drael-Session: stored as a session file the client downloads; the model gets its path, not the base64', async () => {
    const key = await h.newKey({ plan: 'pro' });
    const session = `img${Date.now()}`;
    h.script([
      { type: 'tool_calls', calls: [call('g', 'generate_image', { prompt: 'a red bicycle' })] },
      { type: 'text', content: 'drawn' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask }, { authorization: `Bearer ${key.api_key}`, 'x-drael-session': session });
    expect(r.status).toBe(200);
    await r.json();
    const message = (h.upstream.requests[before + 1]!.body.messages as any[]).find((m) => m.role === 'tool');
    // The whole tool message is a few hundred bytes; the image is 20 KB.
    expect(message.content.length).toBeLessThan(1_000);
    const result = toolMessages(h.upstream.requests[before + 1]!.body)[0]!.content;
    expect(result).toMatchObject({
      ok: true,
      file: expect.stringMatching(/^images\/image_[0-9a-f]+\.png$/),
      bytes: small.length,
      media_type: 'image/png',
      revised_prompt: 'revised: a red bicycle',
    });
    expect(result.note).toContain(`/v1/sessions/${session}/files/${result.file}`);

    const got = await fetch(`${h.gateway.url}/v1/sessions/${session}/files/${result.file}`, { headers: { authorization: `Bearer ${key.api_key}` } });
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(small)).toBe(true);
    expect((await h.nats.request(billingCatalog.usage, { account_id: key.account_id })).allowances.images).toMatchObject({ used: 1, held: 0 });
  });

  it('with X-Drael-Session: an image larger than one message is downloaded whole', async () => {
    const session = `imgl${Date.now()}`;
    h.script([
      { type: 'tool_calls', calls: [call('g', 'generate_image', { prompt: 'a large poster' })] },
      { type: 'text', content: 'drawn' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask }, { 'x-drael-session': session });
    expect(r.status).toBe(200);
    await r.json();
    const result = toolMessages(h.upstream.requests[before + 1]!.body)[0]!.content;
    expect(result).toMatchObject({ ok: true, bytes: large.length });
    const got = await fetch(`${h.gateway.url}/v1/sessions/${session}/files/${result.file}`, { headers: { authorization: `Bearer ${h.apiKey}` } });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe(String(large.length));
    expect(Buffer.from(await got.arrayBuffer()).equals(large)).toBe(true);
  });

  it("without a session: stored in the request's own workspace (in pieces when large), opened by run_code in a later turn, gone with the request", async () => {
    h.script([
      { type: 'tool_calls', calls: [call('g', 'generate_image', { prompt: 'a large map' })] },
      { type: 'tool_calls', calls: [call('c', 'run_code', { runtime: 'bash', code: 'wc -c < images/*.png; head -c 4 images/*.png | tail -c 3' })] },
      { type: 'text', content: 'measured' },
    ]);
    const before = h.upstream.requests.length;
    const r = await h.chat({ messages: ask });
    expect(r.status).toBe(200);
    await r.json();
    const image = toolMessages(h.upstream.requests[before + 1]!.body)[0]!.content;
    expect(image).toMatchObject({ ok: true, bytes: large.length, media_type: 'image/png' });
    expect(image.note).toMatch(/deleted when this answer ends/);
    const run = toolMessages(h.upstream.requests[before + 2]!.body)[1]!.content;
    expect(run).toMatchObject({ ok: true, stdout: `${large.length}\nPNG` });
    await expect.poll(() => requestWorkspaces(h.sandboxInstance!), { timeout: 15_000, interval: 200 }).toEqual([]);
  });
});
