import { Module, type DynamicModule } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { healthController } from '@drael/nats-rpc';
import { sandboxHealthChecks } from './health/health-checks.provider.js';
import { SANDBOX_CONFIG, type SandboxConfig } from './config/config.schema.js';
import { FilesController } from './files/files.controller.js';
import { SessionFilesService } from './files/session-files.service.js';
import { EgressGuard } from './network/egress-guard.js';
import { RunCodeService } from './run/run-code.service.js';
import { RunWorkspaces } from './run/run-workspace.js';
import { RunCancelListener } from './run/run-cancel.listener.js';
import { RunController } from './run/run.controller.js';
import { RunRegistry } from './run/run-registry.js';
import { CONTAINER_RUNTIME } from './runtime/container-runtime.js';
import { DockerContainerRuntime } from './runtime/docker-container.runtime.js';
import { SandboxLifecycle } from './sandbox-lifecycle.service.js';
import { WorkspaceService } from './workspace/workspace.service.js';
import { WorkspaceStore } from './workspace/workspace-store.js';
import { CutUploadSweeper } from './workspace/cut-upload.sweeper.js';
import { openSandboxStores, SANDBOX_STORES } from './placement/sandbox-stores.js';
import { SessionPlacement } from './placement/session-placement.service.js';
import { SessionRouter } from './placement/session-router.js';
import { TenantStoreBudget } from './placement/tenant-store-budget.js';

@Module({})
export class SandboxModule {
  static forRoot(config: SandboxConfig): DynamicModule {
    return {
      module: SandboxModule,
      controllers: [healthController('sandbox'), RunController, FilesController],
      providers: [
        { provide: SANDBOX_CONFIG, useValue: config },
        { provide: CONTAINER_RUNTIME, useFactory: () => new DockerContainerRuntime(config, createLogger('sandbox', config.LOG_LEVEL)) },
        WorkspaceService,
        // Sessions across replicas: placement (KV), the saved workspaces (Object Store), routing.
        { provide: SANDBOX_STORES, useFactory: () => openSandboxStores(config) },
        SessionPlacement,
        TenantStoreBudget,
        WorkspaceStore,
        CutUploadSweeper,
        SessionRouter,
        EgressGuard,
        RunCodeService,
        RunWorkspaces,
        RunRegistry,
        RunCancelListener,
        SessionFilesService,
        SandboxLifecycle,
        sandboxHealthChecks,
      ],
    };
  }
}
