import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger, type Logger } from '@drael/logger';
import { SANDBOX_CONFIG, type SandboxConfig } from '../config/config.schema.js';
import { SANDBOX_STORES, type SandboxStores } from '../placement/sandbox-stores.js';

// Checked this often relative to the grace period (so a cut upload lives at most 1.5 graces), within bounds.
const MIN_SWEEP_MS = 2_000;
const MAX_SWEEP_MS = 10 * 60_000;

/**
 * Collects what a save cut off by a dying replica left in the Object Store (issue 19): the chunks
 * of a content it was uploading when it died, which no object names (SandboxStores.collectCutUploads).
 * A save's other leftovers (its manifest, its completed contents) are named by the record's
 * `pending` and collected by the session's next save (workspace-store.ts). Every replica sweeps;
 * two removing the same chunks is harmless.
 */
@Injectable()
export class CutUploadSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private sweeping = false;
  private readonly log: Logger;

  constructor(
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
    @Inject(SANDBOX_STORES) private readonly stores: SandboxStores,
  ) {
    this.log = createLogger('sandbox', config.LOG_LEVEL).child({ component: 'cut-upload-sweeper' });
  }

  onApplicationBootstrap(): void {
    const every = Math.min(Math.max((this.config.SANDBOX_CUT_UPLOAD_GRACE_S * 1000) / 2, MIN_SWEEP_MS), MAX_SWEEP_MS);
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      const removed = await this.stores.collectCutUploads(this.config.SANDBOX_CUT_UPLOAD_GRACE_S * 1000);
      if (removed > 0) this.log.warn({ removed }, 'removed the chunks of uploads cut off by a dying replica');
      return removed;
    } catch (err) {
      // NATS away for now: the next sweep tries again.
      this.log.warn({ err }, 'cut upload sweep failed');
      return 0;
    } finally {
      this.sweeping = false;
    }
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }
}
