import { Module } from '@nestjs/common';
import { SearchToolController } from './search-tool.controller.js';
import { SearchToolService } from './search-tool.service.js';

/** POST /v1/tools/search. NatsRpcClient comes from the app's global RpcClientModule. */
@Module({
  controllers: [SearchToolController],
  providers: [SearchToolService],
})
export class SearchToolModule {}
