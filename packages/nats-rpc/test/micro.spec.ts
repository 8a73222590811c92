import 'reflect-metadata';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { entrySchemas } from '@drael/contracts';
import { testPrefix } from './fixtures/prefix.js';
import { NatsRpcClient, startService, wireSubject, type RunningService } from '../src/index.js';
import { calls, TestModule } from './fixtures/test.controller.js';
import { testCatalog } from './fixtures/test-catalog.js';

// Issue 22, item 2: every service registers with the NATS services protocol, its endpoints being
// its only subscriptions. The prefix makes the queue group `<prefix>.search`, a name with a dot
// that @nats-io/services refuses for a service-wide queue.
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const prefix = testPrefix('micro');
let service: RunningService;
let client: NatsRpcClient;
let raw: NatsConnection;
let id: string;

beforeAll(async () => {
  service = await startService({ service: 'search', module: TestModule, catalog: testCatalog, natsUrl: NATS_URL, prefix, logLevel: 'silent' });
  client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  raw = await connect({ servers: NATS_URL });
  id = service.server.microId!;
});

afterAll(async () => {
  await client.close();
  await raw.close();
  await service.close();
});

const srv = async <T>(verb: 'PING' | 'INFO' | 'STATS') => (await raw.request(`$SRV.${verb}.search.${id}`, '', { timeout: 2000 })).json<T>();

interface EndpointInfo {
  name: string;
  subject: string;
  queue_group: string;
  metadata: Record<string, string>;
}
interface EndpointStats {
  subject: string;
  num_requests: number;
  num_errors: number;
  processing_time: number;
  last_error?: string;
}

describe('NATS micro registration', () => {
  it('answers $SRV.PING with its name and id', async () => {
    const ping = await srv<{ type: string; name: string; id: string; version: string }>('PING');
    expect(ping).toMatchObject({ type: 'io.nats.micro.v1.ping_response', name: 'search', id, version: '0.1.0' });
  });

  it('is found by name among all services ($SRV.PING.search)', async () => {
    const replies: string[] = [];
    const sub = raw.subscribe(`_INBOX.micro-${prefix}`, { callback: (_e, m) => void replies.push(m.json<{ id: string }>().id) });
    raw.publish('$SRV.PING.search', '', { reply: `_INBOX.micro-${prefix}` });
    await raw.flush();
    for (let i = 0; i < 100 && !replies.includes(id); i++) await new Promise((r) => setTimeout(r, 20));
    sub.unsubscribe();
    expect(replies).toContain(id);
  });

  it('$SRV.INFO lists every catalog entry with its subject, queue group and generated JSON Schemas', async () => {
    const info = await srv<{ type: string; name: string; description: string; endpoints: EndpointInfo[]; metadata: Record<string, string> }>('INFO');
    expect(info.type).toBe('io.nats.micro.v1.info_response');
    expect(info.metadata).toEqual({ prefix, host: hostname(), pid: String(process.pid) });
    for (const entry of Object.values(testCatalog)) {
      const endpoint = info.endpoints.find((e) => e.subject === wireSubject(entry.subject, prefix));
      expect(endpoint, entry.subject).toBeDefined();
      expect(endpoint!.queue_group).toBe(`${prefix}.search`);
      expect(JSON.parse(endpoint!.metadata.request_schema!)).toEqual(entrySchemas(entry).request);
      expect(JSON.parse(endpoint!.metadata.reply_schema!)).toEqual(entrySchemas(entry).reply);
      expect(endpoint!.metadata.timeout_ms).toBe(String(entry.timeoutMs));
    }
    expect(info.endpoints.find((e) => e.subject === wireSubject('search.echo.v1', prefix))?.name).toBe('echo-v1');
  });

  it('$SRV.STATS counts a request and an error reply (as Go micro counts it), with its processing time', async () => {
    const statsOf = async (subject: string) => (await srv<{ endpoints: EndpointStats[] }>('STATS')).endpoints.find((e) => e.subject === wireSubject(subject, prefix))!;
    const echoBefore = await statsOf('search.echo.v1');
    const failBefore = await statsOf('search.fail.v1');
    await client.request(testCatalog.echo, { text: 'counted', delay_ms: 20 });
    await client.request(testCatalog.fail, { kind: 'typed' }).catch(() => undefined);
    const echo = await statsOf('search.echo.v1');
    const fail = await statsOf('search.fail.v1');
    expect(echo.num_requests).toBe(echoBefore.num_requests + 1);
    expect(echo.num_errors).toBe(echoBefore.num_errors);
    // The handler waited 20 ms: the time is measured to the reply, not to the handler's first await.
    expect(echo.processing_time - echoBefore.processing_time).toBeGreaterThanOrEqual(20e6);
    expect(fail.num_requests).toBe(failBefore.num_requests + 1);
    expect(fail.num_errors).toBe(failBefore.num_errors + 1);
    expect(fail.last_error).toBe('timeout: upstream was slow');
  });

  it('each request is handled exactly once (one subscription per subject, no second queue group)', async () => {
    const before = calls.echo;
    for (let i = 0; i < 20; i++) await client.request(testCatalog.echo, { text: `once-${i}` });
    expect(calls.echo - before).toBe(20);
  });
});
