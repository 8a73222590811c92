import { Module } from '@nestjs/common';
import { SessionFilesService } from './session-files.service.js';

/** Session and request workspaces over the sandbox's file subjects; used by the routes, the tools and the turn loop. */
@Module({
  providers: [SessionFilesService],
  exports: [SessionFilesService],
})
export class WorkspacesModule {}
