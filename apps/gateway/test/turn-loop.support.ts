import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NatsRpcClient } from '@drael/nats-rpc';
import {
  cleanSandboxInstance,
  createTestKey,
  parseSse,
  startGatewayProcess,
  startServiceProcess,
  startScriptedUpstream,
  testPrefix,
  type GatewayProcess,
  type ScriptedTurn,
  type ScriptedUpstream,
  type ServiceProcess,
  type TestKey,
  type TestKeyOptions,
} from '@drael/test-support';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SEARXNG_URL = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890';

export type LoopService = 'search' | 'sandbox';

/** A gateway process with its scripted upstream and the real services the test asks for, on one NATS prefix. */
export interface LoopHarness {
  prefix: string;
  upstream: ScriptedUpstream;
  gateway: GatewayProcess;
  services: ServiceProcess[];
  /** The sandbox's instance label (its containers carry it), when the sandbox was started. */
  sandboxInstance?: string;
  /** A NATS client on the harness prefix (billing's subjects, the sandbox's files). */
  nats: NatsRpcClient;
  /** The default key (pro plan, l4_browser) and its account. */
  apiKey: string;
  key: TestKey;
  /** Another key on a new account of its own. */
  newKey(options?: TestKeyOptions): Promise<TestKey>;
  chat(body: Record<string, unknown>, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>;
  /** Sets the script and makes a request; returns the response and the requests the upstream received for it. */
  script(turns: ScriptedTurn[]): void;
  close(): Promise<void>;
}

export async function startLoopHarness(
  options: {
    services?: LoopService[];
    env?: Record<string, string>;
    models?: Record<string, unknown>;
    /** Extra environment per service (`billing` included): HEALTH_PORT to scrape its /metrics. */
    serviceEnv?: Partial<Record<LoopService | 'billing', Record<string, string>>>;
  } = {},
): Promise<LoopHarness> {
  const prefix = testPrefix('loop');
  const upstream = await startScriptedUpstream({ turns: [] });
  const services: ServiceProcess[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  let sandboxInstance: string | undefined;
  let nats: NatsRpcClient | undefined;
  try {
    for (const service of options.services ?? []) {
      if (service === 'search') {
        services.push(
          await startServiceProcess('search', {
            NATS_URL,
            DRAEL_NATS_PREFIX: prefix,
            SEARXNG_URL,
            REDIS_URL,
            SEARCH_CACHE_PREFIX: `test:${prefix}:`,
            SEARCH_ONION_ENGINES: 'fixture-onion',
            SEARCH_VERIFY: 'false',
            ...options.serviceEnv?.search,
          }),
        );
      } else {
        const instance = `test-${prefix.slice(5)}`;
        sandboxInstance = instance;
        const stateDir = `/var/lib/drael/sandbox-test/${instance}`;
        services.push(
          await startServiceProcess(
            'sandbox',
            {
              NATS_URL,
              DRAEL_NATS_PREFIX: prefix,
              SANDBOX_INSTANCE: instance,
              SANDBOX_STATE_DIR: stateDir,
              SANDBOX_MAX_CONCURRENT: '2',
              // One test account runs requests side by side (a run waiting on another's): both
              // slots are its share here (the tenant share is the sandbox's own tests' subject).
              SANDBOX_MAX_CONCURRENT_PER_TENANT: '2',
              SANDBOX_WARM_POOL: '1',
              ...options.serviceEnv?.sandbox,
            },
            { readyTimeoutMs: 60_000 },
          ),
        );
        cleanups.push(() => cleanSandboxInstance(instance, stateDir, prefix));
      }
    }
    // Every /v1 route needs an API key: the gateway's test process brings billing on our prefix
    // (key verification and holds) and a key of a fresh account (pro plan, l4_browser).
    const gateway = await startGatewayProcess(
      {
        NATS_URL,
        DRAEL_NATS_PREFIX: prefix,
        DRAEL_BACKEND_SERVICES: 'agent-run',
        LOG_LEVEL: 'warn',
        // Teardown only: a test's leftover keep-alive sockets must not hold the process for 30 s.
        SHUTDOWN_GRACE_MS: '3000',
        DRAEL_MODELS: JSON.stringify(
          Object.fromEntries(
            Object.entries(options.models ?? { 'gpt-test': { model: 'upstream-model', input_per_1m: 1, output_per_1m: 2 } }).map(([alias, route]) => [
              alias,
              { ...(route as object), base_url: upstream.baseUrl },
            ]),
          ),
        ),
        ...options.env,
      },
      { readyTimeoutMs: 90_000, billing: { tool_level: 'l4_browser', plan: 'pro' }, ...(options.serviceEnv?.billing ? { billingEnv: options.serviceEnv.billing } : {}) },
    );
    nats = await NatsRpcClient.connect({ servers: NATS_URL, prefix });
    const natsClient = nats;
    const key = gateway.key!;
    // A cold billing (first database queries on a busy machine) can miss the key check's
    // deadline once: warm the path before any test counts on it.
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key.api_key}` } });
      if (r.status === 200) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    return {
      prefix,
      upstream,
      gateway,
      services,
      ...(sandboxInstance ? { sandboxInstance } : {}),
      nats: natsClient,
      apiKey: key.api_key,
      key,
      newKey: (o) => createTestKey(natsClient, { tool_level: 'l4_browser', plan: 'pro', ...o }),
      chat: (body, headers = {}, signal) =>
        fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key.api_key}`, ...headers },
          body: JSON.stringify({ model: 'gpt-test', ...body }),
          ...(signal ? { signal } : {}),
        }),
      script: (turns) => upstream.setTurns(turns),
      close: async () => {
        await gateway.stop();
        await natsClient.close();
        for (const s of services) await s.stop('SIGKILL');
        for (const c of cleanups) await c();
        await upstream.close();
      },
    };
  } catch (err) {
    await nats?.close();
    for (const s of services) await s.stop('SIGKILL');
    for (const c of cleanups) await c();
    await upstream.close();
    throw err;
  }
}

/** The volumes of requests' own workspaces (no X-Drael-Session) a sandbox instance holds on disk. */
export async function requestWorkspaces(instance: string): Promise<string[]> {
  const root = join(`/var/lib/drael/sandbox-test/${instance}`, 'requests');
  const out: string[] = [];
  for (const tenant of await readdir(root).catch(() => [] as string[])) {
    for (const f of await readdir(join(root, tenant)).catch(() => [] as string[])) if (f.endsWith('.img')) out.push(f);
  }
  return out;
}

/** A streamed answer: every data payload, the chunks, and the text they add up to. */
export async function readStream(r: Response) {
  const events = parseSse(await r.text());
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const chunks = events.filter((e): e is any => e !== '[DONE]');
  const content = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
  const finishReasons = chunks.map((c) => c.choices?.[0]?.finish_reason).filter((f) => f !== null && f !== undefined);
  const roles = chunks.filter((c) => c.choices?.[0]?.delta?.role !== undefined).length;
  const done = events.filter((e) => e === '[DONE]').length;
  const frames = chunks.map((c) => c.choices?.[0]?.delta?.drael).filter(Boolean);
  return { events, chunks, content, finishReasons, roles, done, frames, ids: new Set(chunks.map((c) => c.id)) };
}

/** The tool messages a request sent to the upstream, parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function toolMessages(body: any): Array<{ tool_call_id: string; content: any }> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (body.messages as any[])
    .filter((m) => m.role === 'tool')
    .map((m) => {
      let content: unknown = m.content;
      try {
        content = JSON.parse(m.content as string);
      } catch {
        // a sub-agent's text result
      }
      return { tool_call_id: m.tool_call_id as string, content };
    });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const toolNames = (body: any): string[] => ((body.tools ?? []) as any[]).map((t) => t.function.name as string);
