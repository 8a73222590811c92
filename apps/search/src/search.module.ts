import { Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { healthController, NatsRpcClient, RpcClientModule } from '@drael/nats-rpc';
import { SEARCH_CONFIG, type SearchConfig } from './config/config.schema.js';
import { SearxClient } from './searx/searx.client.js';
import { RedisSearchCache } from './cache/search-cache.js';
import { FetchServicePageReader } from './verify/page-reader.js';
import { SnippetVerifier } from './verify/snippet-verifier.js';
import { SearchService } from './search/search.service.js';
import { SearchController } from './search/search.controller.js';

const SEARCH_CACHE = Symbol('SEARCH_CACHE');

@Module({})
export class SearchModule implements OnApplicationShutdown {
  constructor(@Inject(SEARCH_CACHE) private readonly cache: RedisSearchCache) {}

  static forRoot(config: SearchConfig): DynamicModule {
    return {
      module: SearchModule,
      // The fetch service is called over NATS for snippet verification.
      imports: [RpcClientModule.forRoot({ servers: config.NATS_URL, prefix: config.DRAEL_NATS_PREFIX, name: 'search' })],
      controllers: [healthController('search'), SearchController],
      providers: [
        { provide: SEARCH_CONFIG, useValue: config },
        {
          provide: SEARCH_CACHE,
          useFactory: () => new RedisSearchCache(config.REDIS_URL, config.SEARCH_CACHE_PREFIX, config.SEARCH_CACHE_TTL_S),
        },
        {
          provide: SearchService,
          inject: [SEARCH_CACHE, NatsRpcClient],
          useFactory: (cache: RedisSearchCache, rpc: NatsRpcClient) =>
            new SearchService(
              new SearxClient(config.SEARXNG_URL, config.SEARXNG_TIMEOUT_MS),
              cache,
              {
                onionEngines: config.SEARCH_ONION_ENGINES,
                verifier: config.SEARCH_VERIFY
                  ? new SnippetVerifier(
                      new FetchServicePageReader(rpc),
                      config.SEARCH_VERIFY_BUDGET_MS,
                      config.SEARCH_VERIFY_CONCURRENCY,
                      config.SEARCH_VERIFY_MAX_IN_FLIGHT,
                    )
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
