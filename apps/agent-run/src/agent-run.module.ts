import { Module, type DynamicModule } from '@nestjs/common';
import { healthController } from '@drael/nats-rpc';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from './config/config.schema.js';

@Module({})
export class AgentRunModule {
  static forRoot(config: AgentRunConfig): DynamicModule {
    return {
      module: AgentRunModule,
      controllers: [healthController('agent-run')],
      providers: [{ provide: AGENT_RUN_CONFIG, useValue: config }],
    };
  }
}
