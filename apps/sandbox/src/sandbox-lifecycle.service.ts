import { access, constants, mkdir } from 'node:fs/promises';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '@drael/logger';
import { SANDBOX_CONFIG, type SandboxConfig } from './config/config.schema.js';
import { CONTAINER_RUNTIME, type ContainerRuntime } from './runtime/container-runtime.js';
import { EgressGuard } from './network/egress-guard.js';
import { WorkspaceService } from './workspace/workspace.service.js';

/**
 * Boot: remove this instance's leftover containers and mounts (a crash or restart mid-run),
 * set up the egress network and its firewall, warm the container pool. Shutdown: remove the pool.
 */
@Injectable()
export class SandboxLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger;

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    @Inject(CONTAINER_RUNTIME) private readonly runtime: ContainerRuntime,
    private readonly workspaces: WorkspaceService,
    private readonly egress: EgressGuard,
  ) {
    this.logger = createLogger('sandbox', config.LOG_LEVEL);
  }

  private booted?: Promise<void>;

  // Nest may run bootstrap hooks again when the microservice starts listening; boot once.
  onApplicationBootstrap(): Promise<void> {
    this.booted ??= this.boot();
    return this.booted;
  }

  private async boot(): Promise<void> {
    await this.checkStateDir();
    this.logger.info('boot: cleaning leftovers');
    const removed = await this.runtime.removeLeftovers();
    if (removed > 0) this.logger.warn({ removed }, 'removed leftover sandbox containers');
    await this.workspaces.recover();
    this.workspaces.startSweeping((err) => this.logger.error({ err }, 'idle workspace sweep failed'));
    if (!(await this.runtime.hasImage())) {
      this.logger.error({ image: this.config.SANDBOX_IMAGE }, 'sandbox image missing: runs answer runtime_unavailable (build it with infra/sandbox-image/build.sh)');
    }
    await this.egress.setUp(this.logger);
    this.runtime.warmUp();
  }

  /**
   * SANDBOX_STATE_DIR must exist (or be creatable) and be writable, and the engine must see it
   * at the same path. On Kubernetes the root filesystem is read-only, so the directory is a
   * volume the pod declares; without it boot used to die on a bare `ENOENT ... mkdir`. Say
   * what is wrong and what to do instead.
   */
  private async checkStateDir(): Promise<void> {
    const dir = this.config.SANDBOX_STATE_DIR;
    try {
      await mkdir(dir, { recursive: true, mode: 0o711 });
      await access(dir, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      throw new Error(
        `SANDBOX_STATE_DIR ${dir} is not writable (${code}): mount a writable volume there, shared with the container engine at the same path (k8s/sandbox/deployment.yaml: the "state" volume)`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runtime.close();
  }
}
