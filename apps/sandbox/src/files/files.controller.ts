import { Controller } from '@nestjs/common';
import { sandboxCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SessionFilesService } from './session-files.service.js';

@Controller()
export class FilesController {
  constructor(private readonly files: SessionFilesService) {}

  @Handles(sandboxCatalog.filesList)
  list(req: ParsedRequestOf<typeof sandboxCatalog.filesList>) {
    return this.files.list(req.tenant, req.session);
  }

  @Handles(sandboxCatalog.filesRead)
  read(req: ParsedRequestOf<typeof sandboxCatalog.filesRead>) {
    return this.files.read(req.tenant, req.session, req.path, req.max_bytes);
  }

  @Handles(sandboxCatalog.filesWrite)
  write(req: ParsedRequestOf<typeof sandboxCatalog.filesWrite>) {
    return this.files.write(req.tenant, req.session, req.path, req.content_base64);
  }

  @Handles(sandboxCatalog.filesDelete)
  delete(req: ParsedRequestOf<typeof sandboxCatalog.filesDelete>) {
    return this.files.delete(req.tenant, req.session, req.path);
  }
}
