// Drael's search path as the benches run it: the built search service (verification off, as the
// search targets are stated) and a gateway in front of it on a NATS prefix of its own.
// test-support starts the built apps as production runs them; its gateway also brings up billing
// and makes an API key (gateway.authHeaders).
import { resolve } from 'node:path';
import { benchPrefix, NATS_URL, root } from './stack-env.mjs';

const { startGatewayProcess, startServiceProcess } = await import(resolve(root, 'packages/test-support/dist/index.js'));

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
    ...searchEnv,
  });
  const gateway = await startGatewayProcess({ NATS_URL: natsUrl, DRAEL_NATS_PREFIX: prefix, DRAEL_BACKEND_SERVICES: 'search', LOG_LEVEL: 'warn', ...gatewayEnv });
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
