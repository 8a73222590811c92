// Drael's uncached search path as the search benches run it: the built search service (verification
// off, as the target is stated) and a gateway in front of it on a fresh NATS prefix. test-support
// starts the built apps as production runs them; its gateway also brings up billing and makes an
// API key (gateway.authHeaders).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** Starts search + gateway; `searchEnv` / `gatewayEnv` are added to each process's environment. */
export async function startDraelSearch({ natsUrl, redisUrl, searxngUrl, searchEnv = {}, gatewayEnv = {} }) {
  const prefix = `bench-${randomBytes(4).toString('hex')}`;
  const { startGatewayProcess, startServiceProcess } = await import(`${repo}/packages/test-support/dist/index.js`);
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
