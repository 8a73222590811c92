import { Controller } from '@nestjs/common';
import { sandboxCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { SessionFilesService } from './session-files.service.js';

@Controller()
export class FilesController {
  constructor(
    private readonly files: SessionFilesService,
    private readonly workspaces: WorkspaceService,
  ) {}

  @Handles(sandboxCatalog.filesList)
  list(req: ParsedRequestOf<typeof sandboxCatalog.filesList>) {
    return this.files.list(req);
  }

  @Handles(sandboxCatalog.filesRead)
  read(req: ParsedRequestOf<typeof sandboxCatalog.filesRead>) {
    return this.files.read(req, req.path, req.max_bytes, req.offset);
  }

  @Handles(sandboxCatalog.filesWrite)
  write(req: ParsedRequestOf<typeof sandboxCatalog.filesWrite>) {
    return this.files.write(req, req.path, req.content_base64, req.append === true);
  }

  @Handles(sandboxCatalog.filesDelete)
  delete(req: ParsedRequestOf<typeof sandboxCatalog.filesDelete>) {
    return this.files.delete(req, req.path);
  }

  @Handles(sandboxCatalog.sessionsList)
  listSessions(req: ParsedRequestOf<typeof sandboxCatalog.sessionsList>) {
    return this.workspaces.listSessions(req.tenant, req);
  }

  @Handles(sandboxCatalog.workspaceDelete)
  async deleteWorkspace(req: ParsedRequestOf<typeof sandboxCatalog.workspaceDelete>) {
    return { deleted: await this.workspaces.remove(req) };
  }
}
