import { SandboxError } from '../sandbox-error.js';

/**
 * At most `max` runs at once and at most `queueMax` waiting; beyond that a run is refused at once
 * with the retryable `sandbox_busy`, so a burst never piles up containers on the host.
 */
export class RunSlots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly max: number,
    private readonly queueMax: number,
  ) {}

  get stats() {
    return { active: this.active, queued: this.waiting.length, max: this.max, queueMax: this.queueMax };
  }

  async acquire(): Promise<() => void> {
    if (this.active < this.max) {
      this.active += 1;
      return this.releaser();
    }
    if (this.waiting.length >= this.queueMax) {
      throw new SandboxError('sandbox_busy', `the sandbox is at capacity (${this.max} running, ${this.waiting.length} queued); retry shortly`, true, {
        running: this.active,
        queued: this.waiting.length,
      });
    }
    // The slot is handed over by release(), so `active` never drops below the running count.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    };
  }
}
