import { Module, type DynamicModule } from '@nestjs/common';
import { RpcClientModule } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from './config/config.schema.js';
import { HealthController } from './health/health.controller.js';
import { ReadinessService } from './health/readiness.service.js';
import { ModelRegistry } from './models/model-registry.js';
import { ModelsController } from './models/models.controller.js';
import { UpstreamClient } from './upstream/upstream.client.js';
import { ModelRouter } from './upstream/model-router.service.js';
import { ChatCompletionsController } from './chat/chat-completions.controller.js';
import { ChatCompletionsService } from './chat/chat-completions.service.js';
import { ChatProxyService } from './chat/chat-proxy.service.js';
import { EmbeddingsController } from './embeddings/embeddings.controller.js';
import { EmbeddingsService } from './embeddings/embeddings.service.js';
import { InferenceModule } from './inference/inference.module.js';
import { AgentsModule } from './agents/agents.module.js';
import { TurnLoopModule } from './turn-loop/turn-loop.module.js';
import { SessionsModule } from './sessions/sessions.module.js';
import { SearchToolModule } from './tools-api/search/search-tool.module.js';
import { ResponsesModule } from './responses/responses.module.js';
import { AuthModule } from './auth/auth.module.js';
import { BillingApiModule } from './billing-api/billing-api.module.js';
import { AdminModule } from './admin/admin.module.js';
import { FetchToolModule } from './tools-api/fetch/fetch-tool.module.js';
import { ConsoleModule } from './console/console.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';

/**
 * The gateway. Feature modules join here: tools-api (search/fetch engineers), auth and
 * rate-limit (billing engineer), the turn loop (issue 7). GATEWAY_CONFIG is global so every
 * feature module can inject it; NatsRpcClient comes from the global RpcClientModule.
 */
@Module({})
export class AppModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        RpcClientModule.forRoot({ servers: config.NATS_URL, prefix: config.DRAEL_NATS_PREFIX, name: 'gateway', security: config }),
        InferenceModule,
        AgentsModule,
        SearchToolModule,
        AuthModule,
        BillingApiModule,
        AdminModule,
        FetchToolModule,
        ResponsesModule,
        TurnLoopModule,
        SessionsModule,
        ConsoleModule,
        OpenApiModule,
      ],
      controllers: [HealthController, ModelsController, ChatCompletionsController, EmbeddingsController],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        ReadinessService,
        ModelRegistry,
        ModelRouter,
        UpstreamClient,
        ChatProxyService,
        ChatCompletionsService,
        EmbeddingsService,
      ],
      exports: [GATEWAY_CONFIG, ModelRegistry, ModelRouter, UpstreamClient],
    };
  }
}
