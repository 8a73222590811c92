import { Module, type DynamicModule } from '@nestjs/common';
import { healthController } from '@drael/nats-rpc';
import { BILLING_CONFIG, type BillingConfig } from './config/config.schema.js';

@Module({})
export class BillingModule {
  static forRoot(config: BillingConfig): DynamicModule {
    return {
      module: BillingModule,
      controllers: [healthController('billing')],
      providers: [{ provide: BILLING_CONFIG, useValue: config }],
    };
  }
}
