import { Inject, Module, type DynamicModule, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { healthController } from '@drael/nats-rpc';
import { fetchHealthChecks } from './health/health-checks.provider.js';
import { FETCH_CONFIG, type FetchConfig } from './config/config.schema.js';
import { FetchRuntime } from './fetch.runtime.js';
import { FetchPageController } from './page/fetch-page.controller.js';

class FetchLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(FetchRuntime) private readonly runtime: FetchRuntime) {}

  onModuleInit(): void {
    // Chromium starts in the background so boot stays fast; the first browser render waits for it.
    void this.runtime.browser?.warm().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}

@Module({})
export class FetchModule {
  static forRoot(config: FetchConfig): DynamicModule {
    return {
      module: FetchModule,
      controllers: [healthController('fetch'), FetchPageController],
      providers: [
        { provide: FETCH_CONFIG, useValue: config },
        { provide: FetchRuntime, useFactory: () => new FetchRuntime(config, createLogger('fetch', config.LOG_LEVEL)) },
        FetchLifecycle,
        fetchHealthChecks,
      ],
    };
  }
}
