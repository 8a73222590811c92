import { Module } from '@nestjs/common';
import { EngineModule } from '../engine/engine.module.js';
import { WorkspacesModule } from '../sessions/workspaces.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { TurnLoopService } from './turn-loop.service.js';

@Module({
  imports: [EngineModule, ToolsModule, WorkspacesModule],
  providers: [TurnLoopService],
  exports: [TurnLoopService, ToolsModule],
})
export class TurnLoopModule {}
