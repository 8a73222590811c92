import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { testPrefix } from './fixtures/prefix.js';
import { NatsRpcClient, RpcError, startService, wireSubject, type RunningService } from '../src/index.js';
import { calls, TestModule } from './fixtures/test.controller.js';
import { testCatalog } from './fixtures/test-catalog.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('rpc');
let service: RunningService;
let client: NatsRpcClient;
let raw: NatsConnection;

beforeAll(async () => {
  service = await startService({ service: 'search', module: TestModule, catalog: testCatalog, natsUrl: NATS_URL, prefix, logLevel: 'silent' });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  raw = await connect({ servers: NATS_URL });
});

afterAll(async () => {
  await client.close();
  await raw.close();
  await service.close();
});

async function caught(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RpcError);
    return err as RpcError;
  }
  throw new Error('expected a rejection');
}

describe('typed NATS request/reply', () => {
  it('round-trips a valid request to a typed reply', async () => {
    const reply = await client.request(testCatalog.echo, { text: 'hi' });
    expect(reply.text).toBe('hi');
  });

  it('carries the request id in a NATS header to the handler', async () => {
    const reply = await client.request(testCatalog.echo, { text: 'hi' }, { requestId: 'req-123' });
    expect(reply.request_id).toBe('req-123');
  });

  it('validates the payload before sending: a bad request never reaches the service', async () => {
    const before = calls.echo;
    const err = await caught(client.request(testCatalog.echo, { text: '' }));
    expect(err.code).toBe('bad_request');
    expect(err.details).toMatchObject({ param: 'text' });
    expect(calls.echo).toBe(before);
  });

  it('the handler validates too: a forged payload sent around the client answers bad_request', async () => {
    const packet = { pattern: 'search.echo.v1', id: 'x1', data: { text: 42 } };
    const msg = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify(packet), { timeout: 2000 });
    const reply = msg.json<{ response: { error: { code: string; message: string } } }>();
    expect(reply.response.error.code).toBe('bad_request');
    expect(reply.response.error.message).toContain('text');
  });

  it('turns an error reply into a typed RpcError with its details', async () => {
    const err = await caught(client.request(testCatalog.fail, { kind: 'typed' }));
    expect(err.code).toBe('timeout');
    expect(err.retryable).toBe(true);
    expect(err.details).toEqual({ after_ms: 5 });
  });

  it('an unexpected exception answers internal and the service keeps serving', async () => {
    const err = await caught(client.request(testCatalog.fail, { kind: 'crash' }));
    expect(err.code).toBe('internal');
    expect(err.message).not.toContain('boom');
    expect((await client.request(testCatalog.echo, { text: 'still here' })).text).toBe('still here');
  });

  it('a typed error with a code its subject does not declare answers internal, not that code', async () => {
    expect(testCatalog.fail.errors).not.toContain('search_unavailable');
    const err = await caught(client.request(testCatalog.fail, { kind: 'undeclared' }));
    expect(err.code).toBe('internal');
    expect(err.message).not.toContain('searx');
  });

  it('validates the reply: a reply off its schema is an internal error, not data', async () => {
    const err = await caught(client.request(testCatalog.fail, { kind: 'bad_reply' }));
    expect(err.code).toBe('internal');
    expect(err.message).toContain('reply does not match');
  });

  it('applies a timeout', async () => {
    const err = await caught(client.request(testCatalog.echo, { text: 'slow', delay_ms: 800 }, { timeoutMs: 100 }));
    expect(err.code).toBe('timeout');
    expect(err.retryable).toBe(true);
  });

  it('an abort signal ends the wait', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await caught(client.request(testCatalog.echo, { text: 'slow', delay_ms: 800 }, { signal: ac.signal }));
    expect(err.code).toBe('timeout');
  });

  it('answers unavailable at once when no service listens', async () => {
    const lonely = await NatsRpcClient.connect({ servers: NATS_URL, prefix: testPrefix('nobody') });
    const started = Date.now();
    const err = await caught(lonely.request(testCatalog.echo, { text: 'anyone?' }, { timeoutMs: 5_000 }));
    await lonely.close();
    expect(err.code).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('a request whose body is not JSON is answered bad_request at once, never left to time out', async () => {
    for (const body of ['not json at all {', '', '\u0000\u0001', '{"text":']) {
      const msg = await raw.request(wireSubject('search.echo.v1', prefix), body, { timeout: 2000 });
      const reply = msg.json<{ error: { code: string; message: string; retryable: boolean } }>();
      expect(reply.error).toMatchObject({ code: 'bad_request', retryable: false });
      expect(reply.error.message).toContain('not JSON');
    }
  });

  it('a body that is not UTF-8 is answered bad_request, never decoded to U+FFFD and handled', async () => {
    const before = calls.texts.length;
    for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
      for (const body of [
        Buffer.concat([Buffer.from('{"text":"a'), Buffer.from(bad), Buffer.from('"}')]),
        Buffer.concat([Buffer.from('{"pattern":"search.echo.v1","id":"u1","data":{"text":"a'), Buffer.from(bad), Buffer.from('"}}')]),
      ]) {
        const msg = await raw.request(wireSubject('search.echo.v1', prefix), body, { timeout: 2000 });
        const reply = msg.json<{ error: { code: string; message: string; retryable: boolean } }>();
        expect(reply.error).toMatchObject({ code: 'bad_request', retryable: false });
        expect(reply.error.message).toContain('UTF-8');
      }
    }
    expect(calls.texts.length).toBe(before);
    const ok = await raw.request(wireSubject('search.echo.v1', prefix), Buffer.from('{"text":"café 😀"}'), { timeout: 2000 });
    expect(ok.json()).toMatchObject({ result: { text: 'café 😀' } });
  });

  it('a message without a reply subject is refused, never executed (packet or plain)', async () => {
    const ghost = `ghost-${Date.now()}`;
    raw.publish(wireSubject('search.echo.v1', prefix), JSON.stringify({ text: `${ghost}-plain` }));
    raw.publish(wireSubject('search.echo.v1', prefix), JSON.stringify({ pattern: 'search.echo.v1', id: 'g1', data: { text: `${ghost}-packet` } }));
    await raw.flush();
    // A request after them on the same subject is served after them.
    const after = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify({ text: `${ghost}-after` }), { timeout: 2000 });
    expect(after.json()).toMatchObject({ result: { text: `${ghost}-after` } });
    expect(calls.texts.filter((t) => t.startsWith(ghost))).toEqual([`${ghost}-after`]);
  });

  it('a malformed message does not take the service down', async () => {
    raw.publish(wireSubject('search.echo.v1', prefix), 'not json at all {');
    await raw.flush();
    expect((await client.request(testCatalog.echo, { text: 'alive' })).text).toBe('alive');
  });

  it("answers a request with exactly the packet Nest's own server writes", async () => {
    const packet = { pattern: 'search.echo.v1', id: 'p1', data: { text: 'same bytes' } };
    const msg = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify(packet), { timeout: 2000 });
    expect(msg.json()).toEqual({ response: { result: { text: 'same bytes', request_id: expect.any(String) } }, isDisposed: true, id: 'p1' });
  });

  it('plain JSON: the body is the request, the reply is the bare envelope', async () => {
    const msg = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify({ text: 'plain' }), { timeout: 2000 });
    expect(msg.json()).toEqual({ result: { text: 'plain', request_id: expect.any(String) } });
  });

  it('plain JSON carries the request id header like the typed client', async () => {
    const h = natsHeaders();
    h.set('x-request-id', 'plain-req-1');
    const msg = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify({ text: 'with id' }), { timeout: 2000, headers: h });
    expect(msg.json()).toEqual({ result: { text: 'with id', request_id: 'plain-req-1' } });
  });

  it('plain JSON is validated as through the typed client: same code, message and param', async () => {
    const typed = await caught(client.request(testCatalog.echo, { text: '' }));
    for (const body of [{ text: '' }, { text: 42 }, [], 'text', null, 7]) {
      const msg = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify(body), { timeout: 2000 });
      const reply = msg.json<{ error: { code: string; message: string; retryable: boolean; details?: { param: string | null } } }>();
      expect(reply.error.code).toBe('bad_request');
      expect(reply.error.retryable).toBe(false);
      if (body && typeof body === 'object' && 'text' in body && body.text === '') {
        expect(reply.error).toEqual(typed.toWire());
      }
    }
  });

  it('plain JSON gets typed errors: a thrown RpcError and an unexpected crash', async () => {
    const ask = async (kind: string) => (await raw.request(wireSubject('search.fail.v1', prefix), JSON.stringify({ kind }), { timeout: 2000 })).json<Record<string, unknown>>();
    expect(await ask('typed')).toEqual({ error: { code: 'timeout', message: 'upstream was slow', retryable: true, details: { after_ms: 5 } } });
    expect(await ask('crash')).toEqual({ error: { code: 'internal', message: 'internal error', retryable: true } });
  });

  it('a plain request on a subject without @Handles is answered bad_request (only catalog handlers build the envelope)', async () => {
    const msg = await raw.request(wireSubject('search.plain.v1', prefix), JSON.stringify({ mode: 'stream' }), { timeout: 2000 });
    expect(msg.json()).toMatchObject({ error: { code: 'bad_request', retryable: false } });
  });

  it("a plain Nest handler outside @Handles still goes through Nest's path: its error and its stream", async () => {
    const ask = async (mode: string) => {
      const packet = { pattern: 'search.plain.v1', id: `plain-${mode}`, data: { mode } };
      return (await raw.request(wireSubject('search.plain.v1', prefix), JSON.stringify(packet), { timeout: 2000 })).json<Record<string, unknown>>();
    };
    const failed = await ask('throw');
    expect(failed).toMatchObject({ id: 'plain-throw', isDisposed: true, err: expect.anything() });
    expect(failed.response).toBeUndefined();
    expect(await ask('stream')).toMatchObject({ id: 'plain-stream', response: { streamed: true } });
    expect((await client.request(testCatalog.echo, { text: 'still here' })).text).toBe('still here');
  });

  it('subjects are namespaced by the prefix: another prefix does not reach this service', async () => {
    const other = await NatsRpcClient.connect({ servers: NATS_URL, prefix: testPrefix('other') });
    const err = await caught(other.request(testCatalog.health, {}));
    await other.close();
    expect(err.code).toBe('unavailable');
    expect((await client.request(testCatalog.health, {})).service).toBe('search');
  });
});
