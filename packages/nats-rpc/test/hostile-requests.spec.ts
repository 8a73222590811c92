import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { MAX_JSON_DEPTH } from '@drael/contracts';
import { testPrefix } from './fixtures/prefix.js';
import { badRequestOf, MAX_PACKET_ID_CHARS, startService, wireSubject, type RunningService } from '../src/index.js';
import { calls, TestModule } from './fixtures/test.controller.js';
import { testCatalog } from './fixtures/test-catalog.js';

// What a caller in any language can send on a subject, written as the attack: each must get one
// small typed answer, and the service must go on answering.

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('hostile');
const echo = wireSubject(testCatalog.echo.subject, prefix);
let service: RunningService;
let raw: NatsConnection;

beforeAll(async () => {
  service = await startService({ service: 'search', module: TestModule, catalog: testCatalog, natsUrl: NATS_URL, prefix, logLevel: 'silent' });
  raw = await connect({ servers: NATS_URL });
});

afterAll(async () => {
  await raw.close();
  await service.close();
});

type Envelope = { result?: { text: string; request_id: string | null }; error?: { code: string; message: string; retryable: boolean } };

async function ask(body: string, headers?: ReturnType<typeof natsHeaders>): Promise<Envelope & { response?: Envelope; id?: string }> {
  const msg = await raw.request(echo, body, { timeout: 3000, ...(headers ? { headers } : {}) });
  return msg.json();
}

async function stillAnswers(): Promise<void> {
  expect((await ask(JSON.stringify({ text: 'still here' }))).result?.text).toBe('still here');
}

describe('hostile requests over NATS', () => {
  it('a reply too large for one NATS message is answered payload_too_large, plain and as a packet (it used to go unanswered)', async () => {
    const max = raw.info!.max_payload;
    // The request fits; the reply (the text echoed in its envelope) does not.
    const plain = await ask(JSON.stringify({ text: 'x'.repeat(max - 40) }));
    expect(plain.error).toMatchObject({ code: 'payload_too_large', retryable: false });
    const request = JSON.stringify({ pattern: testCatalog.echo.subject, id: 'p-1', data: { text: 'x'.repeat(max - 80) } });
    expect(request.length).toBeLessThan(max);
    const packet = await ask(request);
    expect(packet.id).toBe('p-1');
    expect(packet.response?.error?.code).toBe('payload_too_large');
    await stillAnswers();
  });

  it(`a packet id over ${MAX_PACKET_ID_CHARS} characters is refused, not echoed`, async () => {
    const before = calls.echo;
    const msg = await raw.request(echo, JSON.stringify({ pattern: testCatalog.echo.subject, id: 'i'.repeat(400_000), data: { text: 'a' } }), { timeout: 3000 });
    expect(msg.data.length).toBeLessThan(500);
    expect(msg.json<Envelope>().error).toMatchObject({ code: 'bad_request' });
    expect(calls.echo).toBe(before);
    // A UUID-sized id is answered as ever.
    const ok = await ask(JSON.stringify({ pattern: testCatalog.echo.subject, id: 'x'.repeat(MAX_PACKET_ID_CHARS), data: { text: 'a' } }));
    expect(ok.response?.result?.text).toBe('a');
  });

  it(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused before the handler, in any field, plain or packet`, async () => {
    // Written as text: the attacker's JSON, which no encoder of ours had to produce.
    const nest = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
    const before = calls.echo;
    // `extra` is not in the schema (zod would strip it): only the edge's bound stops it.
    const deep = await ask(`{"text":"a","extra":${nest(MAX_JSON_DEPTH)}}`);
    expect(deep.error).toMatchObject({ code: 'bad_request' });
    expect(deep.error?.message).toMatch(/nested deeper/);
    const deepPacket = await ask(`{"pattern":"${testCatalog.echo.subject}","id":"d-1","data":{"text":"a","extra":${nest(10_000)}}}`);
    expect(deepPacket.error?.code).toBe('bad_request');
    expect(calls.echo).toBe(before);
    // The bound itself is accepted.
    expect((await ask(`{"text":"a","extra":${nest(MAX_JSON_DEPTH - 1)}}`)).result?.text).toBe('a');
  });

  it('a large message nested too deep is refused from its bytes, before it is parsed (8 MB of nested brackets took JSON.parse 2.5 s of the service loop)', async () => {
    const parses = vi.spyOn(JSON, 'parse');
    try {
      const deep = `{"text":"a","extra":${'['.repeat(500_000)}${']'.repeat(500_000)}}`;
      const before = calls.echo;
      const answer = await ask(deep);
      expect(answer.error).toMatchObject({ code: 'bad_request' });
      expect(answer.error?.message).toMatch(/nested deeper/);
      expect(calls.echo).toBe(before);
      // This process is the service: no text of that size was ever given to JSON.parse.
      expect(parses.mock.calls.filter(([text]) => typeof text === 'string' && text.length >= 1_000_000)).toHaveLength(0);
      // A large message within the bound, its string full of brackets, is answered as ever.
      const wide = await ask(JSON.stringify({ text: '['.repeat(100_000) }));
      expect(wide.result?.text).toHaveLength(100_000);
    } finally {
      parses.mockRestore();
    }
    await stillAnswers();
  });

  it("a request id the system would not keep (too long, unprintable) is replaced by one of the service's own", async () => {
    const h = natsHeaders();
    h.set('x-request-id', 'r'.repeat(500_000));
    const long = await ask(JSON.stringify({ text: 'a' }), h);
    expect(long.result?.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const printable = natsHeaders();
    printable.set('x-request-id', 'caller-id.1');
    expect((await ask(JSON.stringify({ text: 'a' }), printable)).result?.request_id).toBe('caller-id.1');
  });
});

describe('badRequestOf', () => {
  it('quotes at most 200 characters of a field path or message: both can hold the request own text', () => {
    const strict = z
      .object({ a: z.string() })
      .strict()
      .safeParse({ a: 'x', ['k'.repeat(1_000_000)]: 1 });
    expect(strict.success).toBe(false);
    const error = badRequestOf(strict.error!);
    expect(error.code).toBe('bad_request');
    expect(error.message.length).toBeLessThan(500);
    expect(error.message).toMatch(/^payload: Unrecognized key: "kkk/);
    const nested = z.object({ a: z.record(z.string(), z.number()) }).safeParse({ a: { ['n'.repeat(10_000)]: 'x' } });
    const named = badRequestOf(nested.error!);
    expect(String(named.details?.param).length).toBeLessThanOrEqual(201);
    expect(named.details?.param).toMatch(/^a\.nnn/);
  });
});
