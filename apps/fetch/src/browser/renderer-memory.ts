import { readFile } from 'node:fs/promises';

/**
 * Holds each of Chromium's renderer processes to a bound of memory while pages render.
 *
 * A page's script fills memory faster than any render's time bound ends it: typed arrays of 256 MB
 * each came to 3 GB in 6 s and 6 GB in 14 s (every one of them granted), and a plain JS array grew
 * the renderer to ~4 GB before V8 gave up. Nothing in Chromium stops that on Linux, so one hostile
 * page took the machine's memory, or a pod's whole limit, with every other tenant's renders and the
 * service in it. Here a renderer whose own memory (its anonymous resident pages: the JS heap, typed
 * arrays, DOM; not the binary and fonts it shares) passes the bound is killed; its page crashes,
 * and the render that held it is refused `body_too_large` (BrowserPool).
 *
 * Which renderers there are comes from Chromium (CDP's SystemInfo.getProcessInfo), their memory
 * from Linux (/proc/<pid>/status). Each tenant's pages live in a browser context of their own, and
 * Chromium never shares a renderer between contexts, so the kill ends the offending tenant's page
 * alone. Polled only while a render is in flight: an idle replica wakes for nothing.
 */
export class RendererMemoryWatch {
  private rendering = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** When a renderer was last killed for its memory (epoch ms; 0: never). */
  private lastKillAt = 0;

  constructor(
    /** The pids of Chromium's renderers now (none while the browser is not up). */
    private readonly renderers: () => Promise<readonly number[]>,
    private readonly maxBytes: number,
    private readonly onKill: (pid: number, bytes: number) => void,
    private readonly intervalMs = 200,
  ) {}

  get limitBytes(): number {
    return this.maxBytes;
  }

  /** A render began: renderers are watched until every render that began has ended. */
  renderStarted(): void {
    if (this.rendering++ === 0) {
      this.timer = setInterval(() => void this.poll(), this.intervalMs);
      this.timer.unref();
    }
  }

  renderEnded(): void {
    if (--this.rendering === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Whether a renderer was killed for its memory at or after `since` (epoch ms). */
  killedSince(since: number): boolean {
    return this.lastKillAt >= since;
  }

  stop(): void {
    this.rendering = 0;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at every renderer; one at a time (a slow look is not stacked on by the next tick). */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const pids = await this.renderers().catch(() => [] as readonly number[]);
      await Promise.all(pids.map((pid) => this.check(pid)));
    } finally {
      this.polling = false;
    }
  }

  private async check(pid: number): Promise<void> {
    const bytes = await ownMemoryOf(pid);
    if (bytes === undefined || bytes <= this.maxBytes) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone on its own meanwhile.
      return;
    }
    this.lastKillAt = Date.now();
    this.onKill(pid, bytes);
  }
}

/** A process's anonymous resident memory in bytes (RssAnon), or undefined if it is gone or unreadable. */
async function ownMemoryOf(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'latin1');
    const kb = /^RssAnon:\s+(\d+) kB$/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
