import { Module, type DynamicModule } from '@nestjs/common';
import { healthController, RpcClientModule } from '@drael/nats-rpc';
import { agentRunHealthChecks } from './health/health-checks.provider.js';
import { AGENT_RUN_CONFIG, type AgentRunConfig } from './config/config.schema.js';
import { cryptoProviders } from './crypto/field-cipher.provider.js';
import { PrismaService } from './db/prisma.service.js';
import { AgentRepository } from './agents/agent.repository.js';
import { AgentsService } from './agents/agents.service.js';
import { AgentsController } from './agents/agents.controller.js';
import { RunRepository } from './runs/run.repository.js';
import { RunsService } from './runs/runs.service.js';
import { RunsController } from './runs/runs.controller.js';
import { RunWorkerService } from './runs/run-worker.service.js';
import { RunRetentionService } from './runs/run-retention.service.js';
import { RunQueue } from './queue/run.queue.js';
import { RunExecutor } from './loop/run-executor.js';
import { InferenceClient } from './inference/inference.client.js';
import { SpendClient } from './spend/spend.client.js';
import { SandboxExecuteTool } from './tools/sandbox-execute.tool.js';
import { ToolRegistry } from './tools/tool-registry.js';

@Module({})
export class AgentRunModule {
  static forRoot(config: AgentRunConfig): DynamicModule {
    return {
      module: AgentRunModule,
      imports: [RpcClientModule.forRoot({ servers: config.NATS_URL, prefix: config.DRAEL_NATS_PREFIX, name: 'agent-run', security: config })],
      controllers: [healthController('agent-run'), AgentsController, RunsController],
      providers: [
        { provide: AGENT_RUN_CONFIG, useValue: config },
        ...cryptoProviders,
        PrismaService,
        agentRunHealthChecks,
        AgentRepository,
        AgentsService,
        RunRepository,
        RunsService,
        RunQueue,
        RunExecutor,
        RunWorkerService,
        RunRetentionService,
        InferenceClient,
        SpendClient,
        SandboxExecuteTool,
        ToolRegistry,
      ],
    };
  }
}
