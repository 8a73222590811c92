import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { searchCatalog, type SearchQueryReply, type RequestOf, type WireError } from '@drael/contracts';
import { NatsRpcClient, RpcError, wireSubject } from '@drael/nats-rpc';
import { startServiceProcess, testPrefix, type ServiceProcess } from '@drael/test-support';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';
export const FIXTURE_URL = `http://127.0.0.1:${process.env.DRAEL_SEARX_FIXTURE_PORT ?? 8891}`;

export interface SearchUnderTest {
  prefix: string;
  cachePrefix: string;
  process: ServiceProcess;
  client: NatsRpcClient;
  query(payload: RequestOf<typeof searchCatalog.query>): Promise<SearchQueryReply>;
  /** The RpcError a query fails with (fails the test when it does not fail). */
  error(payload: unknown): Promise<RpcError>;
  close(): Promise<void>;
}

/** A search service process of its own: own NATS prefix, own Redis key prefix. */
export async function startSearch(env: Record<string, string> = {}): Promise<SearchUnderTest> {
  const prefix = testPrefix('search');
  const cachePrefix = `test:${prefix}:`;
  const proc = await startServiceProcess('search', {
    NATS_URL,
    DRAEL_NATS_PREFIX: prefix,
    SEARXNG_URL,
    REDIS_URL,
    SEARCH_CACHE_PREFIX: cachePrefix,
    SEARCH_ONION_ENGINES: 'fixture-onion',
    SEARCH_VERIFY: 'false',
    ...env,
  });
  const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
  return {
    prefix,
    cachePrefix,
    process: proc,
    client,
    query: (payload) => client.request(searchCatalog.query, payload),
    error: async (payload) => {
      // Sent raw, in Nest's packet format, so the service's own validation is what is tested.
      const packet = { pattern: searchCatalog.query.subject, id: randomUUID(), data: payload };
      const msg = await client.connection.request(wireSubject(searchCatalog.query.subject, prefix), JSON.stringify(packet), { timeout: 15_000 });
      const reply = msg.json<{ response?: { error?: WireError } }>();
      if (!reply.response?.error) throw new Error(`expected ${JSON.stringify(payload).slice(0, 80)} to fail`);
      return RpcError.fromWire(reply.response.error);
    },
    close: async () => {
      await client.close();
      await proc.stop();
      await deleteKeys(cachePrefix);
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((res) => server.close(() => res()));
  return port;
}

/**
 * The shared cache's keys under `prefix`, once the writes of the answers given so far have landed:
 * an answer's shared copy is written a moment after it (SHARED_WRITE_DELAY_MS, 10 ms), so a count
 * taken at once would miss a write, the wanted one or one that should never happen.
 */
export async function cacheKeys(prefix: string): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  const redis = new Redis(REDIS_URL);
  try {
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

export function ok(reply: SearchQueryReply): Extract<SearchQueryReply, { ok: true }> {
  if (!reply.ok) throw new Error(`expected ok:true, got ${JSON.stringify(reply)}`);
  return reply;
}
