import 'reflect-metadata';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { testPrefix } from './fixtures/prefix.js';
import { NatsRpcClient, RpcError, startService, wireSubject, type RunningService } from '../src/index.js';
import { TestModule } from './fixtures/test.controller.js';
import { testCatalog } from './fixtures/test-catalog.js';
import { GloballyGuardedModule, guardedCatalog, LocallyGuardedModule, seen } from './fixtures/guarded.module.js';

// issue 20: a subject whose @Handles method nothing wraps is called without Nest's per-message
// pipeline; the attack is a guard, interceptor or global enhancer that the shortcut would skip.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const running: Array<{ close(): Promise<void> }> = [];

afterAll(async () => {
  for (const r of running.reverse()) await r.close();
});

async function boot(name: string, module: unknown, catalog: object): Promise<{ service: RunningService; client: NatsRpcClient; raw: NatsConnection; prefix: string }> {
  const prefix = testPrefix(name);
  const service = await startService({
    service: Object.values(catalog)[0].service,
    module: module as never,
    catalog: catalog as never,
    natsUrl: NATS_URL,
    prefix,
    logLevel: 'silent',
  });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  const raw = await connect({ servers: NATS_URL });
  running.push(service, client, raw);
  return { service, client, raw, prefix };
}

describe('direct dispatch of @Handles methods', () => {
  it('a service with no guard, pipe, interceptor or filter calls every @Handles method directly, and answers as before', async () => {
    const { service, client, raw, prefix } = await boot('direct-plain', TestModule, testCatalog);
    expect([...service.server.directSubjects].sort()).toEqual(['search.echo.v1', 'search.fail.v1', testCatalog.health.subject].sort());
    // A plain Nest handler (no @Handles) keeps Nest's pipeline.
    expect(service.server.directSubjects.has('search.plain.v1')).toBe(false);
    expect((await client.request(testCatalog.echo, { text: 'hi' }, { requestId: 'req-d1' })).request_id).toBe('req-d1');
    const err = await client.request(testCatalog.fail, { kind: 'crash' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).code).toBe('internal');
    // Both wire formats, byte for byte the envelope @Handles builds.
    const plain = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify({ text: 'x' }), { timeout: 2000 });
    expect(plain.json()).toEqual({ result: { text: 'x', request_id: expect.any(String) } });
    const packet = await raw.request(wireSubject('search.echo.v1', prefix), JSON.stringify({ pattern: 'search.echo.v1', id: 'p1', data: { text: 42 } }), { timeout: 2000 });
    expect(packet.json()).toMatchObject({ id: 'p1', isDisposed: true, response: { error: { code: 'bad_request' } } });
  });

  it('a guard on the method or an interceptor on the class keeps Nest pipeline for that subject: the guard refuses, the interceptor runs', async () => {
    const { service, client, raw, prefix } = await boot('direct-local', LocallyGuardedModule, guardedCatalog);
    expect([...service.server.directSubjects]).toEqual(['fetch.open.v1']);
    const before = { ...seen };
    await expect(client.request(guardedCatalog.guarded, { n: 1 })).rejects.toBeInstanceOf(RpcError);
    const plain = await raw.request(wireSubject('fetch.guarded.v1', prefix), JSON.stringify({ n: 2 }), { timeout: 2000 });
    expect(plain.json()).toMatchObject({ error: { code: 'internal' } });
    expect(seen.guarded).toBe(before.guarded);
    expect(seen.denials).toBe(before.denials + 2);
    expect(await client.request(guardedCatalog.intercepted, { n: 3 })).toEqual({ n: 3 });
    expect(seen.interceptor).toBe(before.interceptor + 1);
    expect(await client.request(guardedCatalog.open, { n: 4 })).toEqual({ n: 4 });
    expect(seen.open).toBe(before.open + 1);
  });

  it('a guard for the whole app (APP_GUARD) turns direct dispatch off for every subject: it runs on each message', async () => {
    const { service, client } = await boot('direct-global', GloballyGuardedModule, guardedCatalog);
    expect(service.server.directSubjects.size).toBe(0);
    const before = seen.globalGuard;
    expect(await client.request(guardedCatalog.open, { n: 5 })).toEqual({ n: 5 });
    expect(await client.request(guardedCatalog.intercepted, { n: 6 })).toEqual({ n: 6 });
    expect(seen.globalGuard).toBe(before + 2);
  });
});
