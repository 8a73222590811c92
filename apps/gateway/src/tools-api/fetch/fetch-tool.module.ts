import { Module } from '@nestjs/common';
import { FetchToolController } from './fetch-tool.controller.js';
import { FetchToolService } from './fetch-tool.service.js';

/** POST /v1/tools/fetch. NatsRpcClient comes from the app's global RpcClientModule. */
@Module({
  controllers: [FetchToolController],
  providers: [FetchToolService],
})
export class FetchToolModule {}
