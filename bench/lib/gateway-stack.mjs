// The gateway side of the benches: the built gateway in a process of its own, as shipped
// (LOG_LEVEL=info: one access line per request, to /dev/null here); the real billing service with
// a fresh account's key on the gateway's NATS prefix; answers for subjects of services a bench does
// not run (health, so the catalogue's tools are served; web_search with one result); and
// startGatewayStack, all of these together.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchPrefix, NATS_URL, root, waitHttp } from './stack-env.mjs';

const { createTestKey, startBillingForTests, freePort } = await import(resolve(root, 'packages/test-support/dist/index.js'));
const { NatsRpcClient } = await import(resolve(root, 'packages/nats-rpc/dist/index.js'));
const gatewayRequire = createRequire(resolve(root, 'apps/gateway/package.json'));
const { connect } = await import(pathToFileURL(gatewayRequire.resolve('@nats-io/transport-node')).href);

/** One web_search answer with one result (what the benches' model asks for is answered with this). */
export const SEARCH_ANSWER = {
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

/**
 * Answers `subjects` (subject → answer(request data)) on `prefix` in Nest's packet format, as a
 * service would: `onRequest(subject)` is told as each arrives. Returns the connection (drain it to stop).
 */
export async function serveSubjects(prefix, subjects, { natsUrl = NATS_URL, onRequest } = {}) {
  const nc = await connect({ servers: natsUrl });
  const enc = new TextEncoder();
  for (const [subject, answer] of Object.entries(subjects)) {
    const sub = nc.subscribe(`${prefix}.${subject}`);
    void (async () => {
      for await (const msg of sub) {
        onRequest?.(subject, 'received');
        const packet = msg.json();
        const out = enc.encode(JSON.stringify({ id: packet.id, response: { result: answer(packet.data) }, isDisposed: true }));
        onRequest?.(subject, 'replied');
        msg.respond(out);
      }
    })();
  }
  await nc.flush();
  return nc;
}

/** A health answer of `service`, for a backend the gateway checks but the bench does not run. */
export const healthAnswer = (service) => ({ [`${service}.health.v1`]: () => ({ service, status: 'ok', uptime_s: 1, version: 'bench' }) });

/** The real billing service on `prefix` and a fresh account's API key (as the tests make one). Returns { apiKey, child, stop }. */
export async function startBillingWithKey({ prefix, natsUrl = NATS_URL }) {
  const billing = await startBillingForTests({ NATS_URL: natsUrl, DRAEL_NATS_PREFIX: prefix });
  const client = await NatsRpcClient.connect({ servers: natsUrl, prefix });
  const apiKey = (await createTestKey(client)).api_key;
  await client.close();
  return { apiKey, child: billing.child, stop: () => billing.child.kill('SIGTERM') };
}

/**
 * The built gateway (`dir`: apps/gateway of this checkout or another build's) in a process of its
 * own on a free port, as shipped (LOG_LEVEL=info unless GATEWAY_LOG_LEVEL says otherwise; output
 * but errors to /dev/null, unless GATEWAY_STDOUT is set or `stdout` is 'pipe'). `env` is added to
 * the base environment. Returns { url, port, pid, child, stop }.
 */
export async function spawnGateway({
  prefix,
  natsUrl = NATS_URL,
  dir,
  env = {},
  nodeArgs = [],
  logLevel = process.env.GATEWAY_LOG_LEVEL ?? 'info',
  stdout = process.env.GATEWAY_STDOUT ? 'inherit' : 'ignore',
}) {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    cwd: resolve(dir ?? resolve(root, 'apps/gateway')),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NATS_URL: natsUrl, DRAEL_NATS_PREFIX: prefix, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: logLevel, ...env },
    stdio: ['ignore', stdout, 'inherit'],
  });
  await waitHttp(`http://127.0.0.1:${port}/healthz`);
  // Waited for (10 s at most): a profiled gateway (GATEWAY_NODE_ARGS=--cpu-prof) writes its profile as it exits.
  const stop = () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    return new Promise((done) => {
      const timer = setTimeout(done, 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
    });
  };
  return { url: `http://127.0.0.1:${port}`, port, pid: child.pid, child, stop };
}

/**
 * models: alias → upstream base URL (the alias is also the upstream's model name, so proxied
 * bodies go out as they came); env: more gateway settings (e.g. UPSTREAM_CONNECTIONS, METRICS_PORT).
 * Returns { url, pid, headers, stop }.
 */
export async function startGatewayStack({ models, natsUrl = NATS_URL, gatewayDir, logLevel = process.env.GATEWAY_LOG_LEVEL ?? 'info', nodeArgs = [], env: extraEnv = {}, stdout }) {
  const prefix = benchPrefix();
  const stops = [];
  // Health (and search) answers for the catalogue's backends.
  const nc = await serveSubjects(prefix, { ...healthAnswer('sandbox'), ...healthAnswer('search'), ...healthAnswer('fetch'), 'search.query.v1': () => SEARCH_ANSWER }, { natsUrl });
  stops.push(() => nc.drain());
  const billing = await startBillingWithKey({ prefix, natsUrl });
  stops.push(billing.stop);
  const gateway = await spawnGateway({
    prefix,
    natsUrl,
    dir: gatewayDir,
    nodeArgs,
    logLevel,
    ...(stdout ? { stdout } : {}),
    env: {
      DRAEL_MODELS: JSON.stringify(Object.fromEntries(Object.entries(models).map(([alias, baseUrl]) => [alias, { base_url: baseUrl, model: alias }]))),
      DRAEL_BACKEND_SERVICES: 'sandbox,search,fetch',
      ...extraEnv,
    },
  });
  stops.push(gateway.stop);
  return {
    url: gateway.url,
    pid: gateway.pid,
    child: gateway.child,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${billing.apiKey}` },
    async stop() {
      for (const s of stops.reverse()) await s();
    },
  };
}
