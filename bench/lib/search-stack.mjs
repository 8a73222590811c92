// Drael's search path as the benches run it: the built search service (verification off, as the
// search targets are stated) and a gateway in front of it on a NATS prefix of its own.
// test-support starts the built apps as production runs them; its gateway also brings up billing
// and makes an API key (gateway.authHeaders).
import { resolve } from 'node:path';
import { benchPrefix, NATS_URL, root } from './stack-env.mjs';

const { startGatewayProcess, startServiceProcess } = await import(resolve(root, 'packages/test-support/dist/index.js'));

/**
 * SEARCH_NODE_ARGS / GATEWAY_NODE_ARGS in the bench's environment become that process's NODE_OPTIONS
 * (profiling: "--require ./bench/search/cpu-prof.cjs", which writes to CPU_PROF_DIR).
 */
function nodeArgs(name) {
  if (!process.env[name]) return {};
  return { NODE_OPTIONS: process.env[name], ...(process.env.CPU_PROF_DIR ? { CPU_PROF_DIR: process.env.CPU_PROF_DIR } : {}) };
}

/** Starts search + gateway; `searchEnv` / `gatewayEnv` are added to each process's environment. */
export async function startSearchStack({
  prefix = benchPrefix(),
  natsUrl = NATS_URL,
  redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  searxngUrl = process.env.SEARXNG_URL ?? 'http://127.0.0.1:8890',
  searchEnv = {},
  gatewayEnv = {},
}) {
  const search = await startServiceProcess('search', {
    NATS_URL: natsUrl,
    DRAEL_NATS_PREFIX: prefix,
    SEARXNG_URL: searxngUrl,
    REDIS_URL: redisUrl,
    SEARCH_CACHE_PREFIX: `bench:${prefix}:`,
    SEARCH_CACHE_TTL_S: '120',
    SEARCH_ONION_ENGINES: 'fixture-onion',
    SEARCH_VERIFY: 'false',
    LOG_LEVEL: 'warn',
    ...nodeArgs('SEARCH_NODE_ARGS'),
    ...searchEnv,
  });
  const gateway = await startGatewayProcess({
    NATS_URL: natsUrl,
    DRAEL_NATS_PREFIX: prefix,
    DRAEL_BACKEND_SERVICES: 'search',
    LOG_LEVEL: 'warn',
    ...nodeArgs('GATEWAY_NODE_ARGS'),
    ...gatewayEnv,
  });
  return {
    prefix,
    search,
    gateway,
    async stop() {
      await gateway.stop();
      await search.stop();
    },
  };
}
