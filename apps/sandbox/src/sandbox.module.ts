import { Module, type DynamicModule } from '@nestjs/common';
import { healthController } from '@drael/nats-rpc';
import { SANDBOX_CONFIG, type SandboxConfig } from './config/config.schema.js';

@Module({})
export class SandboxModule {
  static forRoot(config: SandboxConfig): DynamicModule {
    return {
      module: SandboxModule,
      controllers: [healthController('sandbox')],
      providers: [{ provide: SANDBOX_CONFIG, useValue: config }],
    };
  }
}
