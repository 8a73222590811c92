// The built gateway in a process of its own, as shipped (LOG_LEVEL=info: one access line per
// request, to /dev/null here), with a fresh account's key from the real billing service on the
// gateway's NATS prefix, and health answers for the catalogue's backends so its tools are served
// (the model in these benches answers with text, or calls web_search, answered by `onSearch`).
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const { createTestKey, startBillingForTests, freePort } = await import(resolve(root, 'packages/test-support/dist/index.js'));
const { NatsRpcClient } = await import(resolve(root, 'packages/nats-rpc/dist/index.js'));
const gatewayRequire = createRequire(resolve(root, 'apps/gateway/package.json'));
const { connect } = await import(pathToFileURL(gatewayRequire.resolve('@nats-io/transport-node')).href);

const SEARCH_ANSWER = {
  ok: true,
  found: true,
  results: [{ title: 'Bench', url: 'https://bench.test/', snippet: 'a result', source: 'bench', engines: ['bench'], page_age: null, verified: false }],
  degraded: [],
  coverage: 1,
  sources_tried: ['bench'],
  intent: 'general',
  took_ms: 0,
  cached: false,
};

async function waitHttp(url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * models: alias → upstream base URL (the alias is also the upstream's model name, so proxied
 * bodies go out as they came); env: more gateway settings (e.g. UPSTREAM_CONNECTIONS, METRICS_PORT).
 * Returns { url, pid, headers, stop }.
 */
export async function startGatewayStack({
  models,
  natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  gatewayDir,
  logLevel = process.env.GATEWAY_LOG_LEVEL ?? 'info',
  nodeArgs = [],
  env: extraEnv = {},
}) {
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  const stops = [];
  // Health (and search) answers for the catalogue's backends, in Nest's packet format.
  const nc = await connect({ servers: natsUrl });
  stops.push(() => nc.drain());
  const enc = new TextEncoder();
  const serve = (subject, answer) => {
    const sub = nc.subscribe(`${prefix}.${subject}`);
    void (async () => {
      for await (const msg of sub) {
        const packet = msg.json();
        msg.respond(enc.encode(JSON.stringify({ id: packet.id, response: { result: answer(packet.data) }, isDisposed: true })));
      }
    })();
  };
  for (const service of ['sandbox', 'search', 'fetch']) serve(`${service}.health.v1`, () => ({ service, status: 'ok', uptime_s: 1, version: 'bench' }));
  serve('search.query.v1', () => SEARCH_ANSWER);
  await nc.flush();

  const billing = await startBillingForTests({ NATS_URL: natsUrl, DRAEL_NATS_PREFIX: prefix });
  stops.push(() => billing.child.kill('SIGTERM'));
  const client = await NatsRpcClient.connect({ servers: natsUrl, prefix });
  const apiKey = (await createTestKey(client)).api_key;
  await client.close();

  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NATS_URL: natsUrl,
    DRAEL_NATS_PREFIX: prefix,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: logLevel,
    DRAEL_MODELS: JSON.stringify(Object.fromEntries(Object.entries(models).map(([alias, baseUrl]) => [alias, { base_url: baseUrl, model: alias }]))),
    DRAEL_BACKEND_SERVICES: 'sandbox,search,fetch',
    ...extraEnv,
  };
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], { cwd: resolve(gatewayDir ?? resolve(root, 'apps/gateway')), env, stdio: ['ignore', 'ignore', 'inherit'] });
  // Waited for (10 s at most): a profiled gateway (GATEWAY_NODE_ARGS=--cpu-prof) writes its profile as it exits.
  stops.push(() => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    return new Promise((done) => {
      const timer = setTimeout(done, 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  });
  await waitHttp(`http://127.0.0.1:${port}/healthz`);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    child,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    async stop() {
      for (const s of stops.reverse()) await s();
    },
  };
}
