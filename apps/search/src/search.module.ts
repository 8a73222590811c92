import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { HEALTH_CHECKS, healthController, NatsRpcClient, RpcClientModule, type HealthCheck } from '@drael/nats-rpc';
import { SEARCH_CONFIG, type SearchConfig } from './config/config.schema.js';
import { SearxClient } from './searx/searx.client.js';
import { RedisSearchCache } from './cache/search-cache.js';
import { FetchServicePageReader } from './verify/page-reader.js';
import { SnippetVerifier } from './verify/snippet-verifier.js';
import { SearchService } from './search/search.service.js';
import { SearchController } from './search/search.controller.js';

const SEARCH_CACHE = Symbol('SEARCH_CACHE');
const SEARX_CLIENT = Symbol('SEARX_CLIENT');

@Module({})
export class SearchModule implements OnApplicationShutdown {
  constructor(@Inject(SEARCH_CACHE) private readonly cache: RedisSearchCache) {}

  static forRoot(config: SearchConfig): DynamicModule {
    return {
      module: SearchModule,
      // The fetch service is called over NATS for snippet verification.
      imports: [RpcClientModule.forRoot({ servers: config.NATS_URL, prefix: config.DRAEL_NATS_PREFIX, name: 'search', security: config })],
      controllers: [healthController('search'), SearchController],
      providers: [
        { provide: SEARCH_CONFIG, useValue: config },
        {
          provide: SEARCH_CACHE,
          useFactory: () => new RedisSearchCache(config.REDIS_URL, config.SEARCH_CACHE_PREFIX, config.SEARCH_CACHE_TTL_S),
        },
        { provide: SEARX_CLIENT, useFactory: () => new SearxClient(config.SEARXNG_URL, config.SEARXNG_TIMEOUT_MS) },
        {
          // SearXNG is what search is; the cache is not (searches run uncached without Redis).
          provide: HEALTH_CHECKS,
          inject: [SEARX_CLIENT, SEARCH_CACHE],
          useFactory: (searx: SearxClient, cache: RedisSearchCache): HealthCheck[] => [
            { name: 'searxng', check: () => searx.ping() },
            { name: 'redis', critical: false, check: () => cache.ping() },
          ],
        },
        {
          provide: SearchService,
          inject: [SEARX_CLIENT, SEARCH_CACHE, NatsRpcClient],
          useFactory: (searx: SearxClient, cache: RedisSearchCache, rpc: NatsRpcClient) =>
            new SearchService(
              searx,
              cache,
              {
                onionEngines: config.SEARCH_ONION_ENGINES,
                verifier: config.SEARCH_VERIFY
                  ? new SnippetVerifier(new FetchServicePageReader(rpc), config.SEARCH_VERIFY_BUDGET_MS, config.SEARCH_VERIFY_CONCURRENCY, config.SEARCH_VERIFY_MAX_IN_FLIGHT)
                  : undefined,
              },
              createLogger('search', config.LOG_LEVEL),
            ),
        },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.close();
  }
}
