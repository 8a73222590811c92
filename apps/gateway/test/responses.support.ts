import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { NatsRpcClient } from '@drael/nats-rpc';
import {
  createTestKey,
  parseSse,
  startGatewayProcess,
  startScriptedUpstream,
  startServiceProcess,
  testPrefix,
  type GatewayProcess,
  type ScriptedUpstream,
  type ServiceProcess,
  type TestKeyOptions,
} from '@drael/test-support';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';
export const FIXTURE_URL = `http://127.0.0.1:${process.env.DRAEL_SEARX_FIXTURE_PORT ?? 8891}`;

/** Subjects seen on the wire, by a plain NATS subscriber beside the services (observation, not a mock). */
export class WireTap {
  readonly seen: Array<{ subject: string; data: unknown }> = [];
  private constructor(
    private readonly nc: NatsConnection,
    private readonly sub: Subscription,
  ) {}

  static async start(prefix: string): Promise<WireTap> {
    const nc = await connect({ servers: NATS_URL });
    const sub = nc.subscribe(`${prefix}.>`);
    const tap = new WireTap(nc, sub);
    void (async () => {
      for await (const m of sub) {
        if (m.subject.endsWith('.health.v1')) continue;
        let data: unknown;
        try {
          data = m.json<{ data?: unknown }>().data;
        } catch {
          data = undefined;
        }
        tap.seen.push({ subject: m.subject.slice(prefix.length + 1), data });
      }
    })();
    return tap;
  }

  of(subject: string): unknown[] {
    return this.seen.filter((s) => s.subject === subject).map((s) => s.data);
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    this.sub.unsubscribe();
    await this.nc.close();
  }
}

/** A page server on loopback for web_fetch (the fetch service lets 127.0.0.0/8 through in tests only). */
export async function startPages(
  pages: Record<string, { status?: number; body: string; type?: string; location?: string }>,
): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const page = pages[req.url ?? ''];
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(page.status ?? 200, { 'content-type': page.type ?? 'text/html; charset=utf-8', ...(page.location ? { location: page.location } : {}) });
    res.end(page.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

// Boot can take long on a shared, busy 2-core machine; waiting longer costs nothing when it is quick.
const BOOT = { readyTimeoutMs: 120_000 };

export interface Stack {
  prefix: string;
  keyPrefix: string;
  upstream: ScriptedUpstream;
  gateway: GatewayProcess;
  search: ServiceProcess;
  fetch: ServiceProcess;
  tap: WireTap;
  /** The bearer header of the stack's own key (a fresh account from the real billing service). */
  auth: Record<string, string>;
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(id: string, headers?: Record<string, string>): Promise<Response>;
  del(id: string, headers?: Record<string, string>): Promise<Response>;
  /** A key of another, new account on the same billing service. */
  newKey(options?: TestKeyOptions): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** Scripted upstream, the real search and fetch services, and the built gateway, all on one fresh prefix. */
export async function startStack(gatewayEnv: Record<string, string> = {}): Promise<Stack> {
  // The local searx and its fixture corpora: started unless they already answer (idempotent).
  execFileSync('bash', [fileURLToPath(new URL('../../../infra/searx/start-local.sh', import.meta.url))], { stdio: 'inherit', timeout: 60_000 });
  const prefix = testPrefix('resp');
  const keyPrefix = `test:${prefix}:`;
  const tap = await WireTap.start(prefix);
  const upstream = await startScriptedUpstream({ turns: [] });
  const [search, fetchSvc, gateway] = await Promise.all([
    startServiceProcess(
      'search',
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        SEARXNG_URL,
        REDIS_URL,
        SEARCH_CACHE_PREFIX: `${keyPrefix}search:`,
        SEARCH_VERIFY: 'false',
      },
      BOOT,
    ),
    startServiceProcess(
      'fetch',
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        REDIS_URL,
        FETCH_CACHE_PREFIX: `${keyPrefix}fetch:`,
        FETCH_BROWSER: 'off',
        TOR_SOCKS_URL: '',
        FETCH_TEST_ALLOW_CIDRS: '127.0.0.0/8',
      },
      BOOT,
    ),
    withRetries(() =>
      startGatewayProcess(
        {
          NATS_URL,
          DRAEL_NATS_PREFIX: prefix,
          DRAEL_BACKEND_SERVICES: 'search,fetch',
          REDIS_URL,
          RESPONSES_KEY_PREFIX: `${keyPrefix}responses:`,
          RATE_LIMIT_KEY_PREFIX: `${keyPrefix}rl:`,
          LOG_LEVEL: 'warn',
          DRAEL_MODELS: JSON.stringify({ 'gpt-test': { base_url: upstream.baseUrl, model: 'upstream-model' } }),
          ...gatewayEnv,
        },
        { billing: { tool_level: 'l4_browser' }, ...BOOT },
      ),
    ),
  ]);
  const auth = gateway.authHeaders;
  const url = (id: string) => `${gateway.url}/v1/responses/${id}`;
  return {
    prefix,
    keyPrefix,
    upstream,
    gateway,
    search,
    fetch: fetchSvc,
    tap,
    auth,
    post: (body, headers = auth) =>
      fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    get: (id, headers = auth) => fetch(url(id), { headers }),
    del: (id, headers = auth) => fetch(url(id), { method: 'DELETE', headers }),
    newKey: async (options = {}) => {
      const client = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
      try {
        const key = await createTestKey(client, options);
        return { authorization: `Bearer ${key.api_key}` };
      } finally {
        await client.close();
      }
    },
    close: async () => {
      await gateway.stop();
      await Promise.all([search.stop(), fetchSvc.stop()]);
      await upstream.close();
      await tap.close();
      await deleteKeys(keyPrefix);
    },
  };
}

/**
 * Billing's test schema is migrated under a Postgres advisory lock that other packages' test runs
 * hold at the same moment on this shared machine; a lock timeout is worth another try.
 */
async function withRetries<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await start();
    } catch (err) {
      if (i >= attempts || !/advisory lock|db-migrate/.test(String((err as Error).message))) throw err;
    }
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

export type SseEvent = { type: string; sequence_number: number } & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The events of a streamed response, in order. */
export async function eventsOf(r: Response): Promise<SseEvent[]> {
  return parseSse(await r.text()).filter((e): e is SseEvent => typeof e === 'object');
}

export { parseSse };
