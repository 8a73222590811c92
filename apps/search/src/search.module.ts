import { Module, type DynamicModule } from '@nestjs/common';
import { healthController } from '@drael/nats-rpc';
import { SEARCH_CONFIG, type SearchConfig } from './config/config.schema.js';

@Module({})
export class SearchModule {
  static forRoot(config: SearchConfig): DynamicModule {
    return {
      module: SearchModule,
      controllers: [healthController('search')],
      providers: [{ provide: SEARCH_CONFIG, useValue: config }],
    };
  }
}
