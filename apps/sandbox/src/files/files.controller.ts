import { Controller } from '@nestjs/common';
import { sandboxCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SessionPlacement } from '../placement/session-placement.service.js';
import { SessionRouter } from '../placement/session-router.js';
import { TenantStoreBudget } from '../placement/tenant-store-budget.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { parseNewFilePath, parseWorkspacePath } from './safe-path.js';
import { decodeWritable, SessionFilesService } from './session-files.service.js';

/** The file subjects, each routed to the replica holding its session (placement/session-router.ts). */
@Controller()
export class FilesController {
  constructor(
    files: SessionFilesService,
    workspaces: WorkspaceService,
    private readonly placement: SessionPlacement,
    private readonly router: SessionRouter,
    private readonly budget: TenantStoreBudget,
  ) {
    const files_ = { create: false, mutates: false, needsFiles: true };
    router.register({ entry: sandboxCatalog.filesList, ...files_, local: (req) => files.list(req) });
    router.register({
      entry: sandboxCatalog.filesRead,
      ...files_,
      validate: (req) => void parseWorkspacePath(req.path),
      local: (req) => files.read(req, req.path, req.max_bytes, req.offset),
    });
    router.register({
      entry: sandboxCatalog.filesWrite,
      create: true,
      mutates: true,
      needsFiles: true,
      validate: (req) => {
        parseNewFilePath(req.path);
        decodeWritable(req.content_base64);
      },
      // A piece with more to come is saved with the last piece (the contract's `more`).
      savesLater: (req) => req.more === true,
      local: (req) => files.write(req, req.path, req.content_base64, { append: req.append, more: req.more, upload: req.upload }),
    });
    router.register({
      entry: sandboxCatalog.filesDelete,
      create: false,
      mutates: true,
      needsFiles: true,
      validate: (req) => void parseWorkspacePath(req.path),
      local: (req) => (req.upload === undefined ? files.delete(req, req.path) : files.dropUpload(req, req.path, req.upload)),
    });
    router.register({
      entry: sandboxCatalog.workspaceDelete,
      create: false,
      mutates: false,
      // A session taken over only to be deleted is not restored first.
      needsFiles: false,
      // Deleting the volume here deletes its record and saved copy too (the placement's hook).
      local: async (req, placed) => ({ deleted: (await workspaces.remove(req)) || placed?.where === 'here' }),
    });
  }

  @Handles(sandboxCatalog.filesList)
  list(req: ParsedRequestOf<typeof sandboxCatalog.filesList>) {
    return this.router.call(sandboxCatalog.filesList, req);
  }

  @Handles(sandboxCatalog.filesRead)
  read(req: ParsedRequestOf<typeof sandboxCatalog.filesRead>) {
    return this.router.call(sandboxCatalog.filesRead, req);
  }

  @Handles(sandboxCatalog.filesWrite)
  write(req: ParsedRequestOf<typeof sandboxCatalog.filesWrite>) {
    return this.router.call(sandboxCatalog.filesWrite, req);
  }

  @Handles(sandboxCatalog.filesDelete)
  delete(req: ParsedRequestOf<typeof sandboxCatalog.filesDelete>) {
    return this.router.call(sandboxCatalog.filesDelete, req);
  }

  // Any replica answers: the list and the stored total are read from the placement records every replica shares.
  @Handles(sandboxCatalog.sessionsList)
  async listSessions(req: ParsedRequestOf<typeof sandboxCatalog.sessionsList>) {
    const [page, usage] = await Promise.all([this.placement.listSessions(req.tenant, req), this.budget.usage(req.tenant)]);
    return { ...page, ...usage };
  }

  @Handles(sandboxCatalog.workspaceDelete)
  deleteWorkspace(req: ParsedRequestOf<typeof sandboxCatalog.workspaceDelete>) {
    return this.router.call(sandboxCatalog.workspaceDelete, req);
  }
}
