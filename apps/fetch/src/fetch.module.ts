import { Module, type DynamicModule } from '@nestjs/common';
import { healthController } from '@drael/nats-rpc';
import { FETCH_CONFIG, type FetchConfig } from './config/config.schema.js';

@Module({})
export class FetchModule {
  static forRoot(config: FetchConfig): DynamicModule {
    return {
      module: FetchModule,
      controllers: [healthController('fetch')],
      providers: [{ provide: FETCH_CONFIG, useValue: config }],
    };
  }
}
