import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPrefix } from './fixtures/prefix.js';
import { NatsRpcClient, RpcError, startService, type RunningService } from '../src/index.js';
import { calls, TestModule } from './fixtures/test.controller.js';
import { testCatalog } from './fixtures/test-catalog.js';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('size');
let service: RunningService;
let client: NatsRpcClient;

beforeAll(async () => {
  service = await startService({ service: 'search', module: TestModule, catalog: testCatalog, natsUrl: NATS_URL, prefix, logLevel: 'silent' });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
});

afterAll(async () => {
  await client.close();
  await service.close();
});

describe('a request larger than one NATS message', () => {
  it('is refused before sending with a typed payload_too_large stating the limit, never naming the subject', async () => {
    const max = client.connection.info!.max_payload;
    const before = calls.echo;
    const err = await client.request(testCatalog.echo, { text: 'x'.repeat(max + 1) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ code: 'payload_too_large', retryable: false, details: { limit_bytes: max } });
    expect((err as RpcError).message).toContain(String(max));
    expect((err as RpcError).message).not.toContain('search.echo');
    expect(calls.echo).toBe(before);
    // The connection is still usable.
    expect((await client.request(testCatalog.echo, { text: 'ok' })).text).toBe('ok');
  });
});
