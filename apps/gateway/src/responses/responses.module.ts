import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG } from '../config/config.schema.js';
import { AuthModule } from '../auth/auth.module.js';
import { EngineModule } from '../engine/engine.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { ToolAdapterWebTools, WebToolsPort } from './hosted/web-tools.port.js';
import { ResponseLoopService } from './response-loop.service.js';
import { ResponseStore } from './response.store.js';
import { RESPONSES_CONFIG, ResponsesConfigSchema } from './responses.config.js';
import { ResponsesController } from './responses.controller.js';
import { ResponsesService } from './responses.service.js';

/** The Responses API (spec 02): POST/GET/DELETE /v1/responses with the hosted tools. */
@Module({
  imports: [EngineModule, ToolsModule, AuthModule],
  controllers: [ResponsesController],
  providers: [
    // The gateway config carries the responses keys (config.schema.ts joins responsesConfigShape).
    { provide: RESPONSES_CONFIG, useFactory: (config: unknown) => ResponsesConfigSchema.parse(config), inject: [GATEWAY_CONFIG] },
    { provide: WebToolsPort, useClass: ToolAdapterWebTools },
    ResponseStore,
    ResponseLoopService,
    ResponsesService,
  ],
})
export class ResponsesModule {}
