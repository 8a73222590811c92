import { Module } from '@nestjs/common';
import { ToolsModule } from '../tools/tools.module.js';
import { TurnLoopService } from './turn-loop.service.js';

@Module({
  imports: [ToolsModule],
  providers: [TurnLoopService],
  exports: [TurnLoopService, ToolsModule],
})
export class TurnLoopModule {}
