import { readFile } from 'node:fs/promises';

// How long after the browser process was found past the bound it is not looked at again.
const BROWSER_QUIET_MS = 2_000;

/** One of Chromium's processes, as Chromium names it (CDP's SystemInfo.getProcessInfo). */
export interface ChromiumProcess {
  type: string;
  id: number;
}

/**
 * Holds the memory a page can make Chromium take to a bound while pages render.
 *
 * A page's script fills memory faster than any render's time bound ends it, in two places:
 * - **its renderer**: typed arrays of 256 MB each came to 3 GB in 6 s and 6 GB in 14 s (every one of
 *   them granted), a plain JS array grew to ~4 GB before V8 gave up;
 * - **the browser process**, through the storage APIs: a context of Playwright's is off the record,
 *   so what a page puts in Cache Storage or IndexedDB is kept in the browser process's memory, up
 *   to a quota Chromium sets at 15-20 % of the machine's (the node's, in a pod) physical memory: 1.2
 *   GB in 2 s here, kept while its context lives (a tenant's context is kept between requests).
 * Unbounded, one hostile page took the machine, or the fetch pod's whole limit with every tenant's
 * renders and the service in it.
 *
 * A renderer whose own memory (its anonymous resident pages: JS heap, typed arrays, DOM; not the
 * binary and fonts it shares) passes the bound is killed: its page crashes, and the render that
 * held it is refused (BrowserPool). Each tenant's pages live in a browser context of their own, and
 * Chromium never shares a renderer between contexts, so that ends the offending page alone. A page
 * has more than one renderer when it frames other sites (each site its own process): all renderers
 * together are held to the bound times the pages rendering at once, the largest killed first (a
 * frame's renderer killed crashes its page as Playwright sees it: refused the same way). The
 * browser process past the bound is told to BrowserPool (`browserOver`), which knows the renders
 * in flight and whose storage it is.
 *
 * Which processes there are comes from Chromium, their memory from Linux (/proc/<pid>/status).
 * Polled only while a render is in flight: an idle replica wakes for nothing.
 */
export class BrowserMemoryWatch {
  private rendering = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  /** When a renderer was last killed for its memory (epoch ms; 0: never). */
  private lastKillAt = 0;
  private browserPid: number | undefined;
  /** Until when the browser process is not looked at again (epoch ms): what was closed frees its memory meanwhile. */
  private browserQuietUntil = 0;

  constructor(
    /** Chromium's processes now (none while the browser is not up). */
    private readonly processes: () => Promise<readonly ChromiumProcess[]>,
    private readonly maxBytes: number,
    /** The most all renderers together may hold: the bound times the pages that render at once. */
    private readonly allRenderersMaxBytes: number,
    private readonly on: { rendererKilled(pid: number, bytes: number): void; browserOver(bytes: number): Promise<void> },
    private readonly intervalMs = 200,
  ) {}

  get limitBytes(): number {
    return this.maxBytes;
  }

  /** A render began: Chromium is watched until every render that began has ended. */
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

  /** Whether the browser process holds more than the bound now (false when it is not known yet). */
  async browserOver(): Promise<boolean> {
    if (this.browserPid === undefined) return false;
    return ((await ownMemoryOf(this.browserPid)) ?? 0) > this.maxBytes;
  }

  stop(): void {
    this.rendering = 0;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look at Chromium's processes; one at a time (a slow look is not stacked on by the next tick). */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const processes = await this.processes().catch(() => [] as readonly ChromiumProcess[]);
      this.browserPid = processes.find((p) => p.type === 'browser')?.id ?? this.browserPid;
      await this.checkRenderers(processes.filter((p) => p.type === 'renderer').map((p) => p.id));
      if (this.browserPid === undefined || Date.now() < this.browserQuietUntil) return;
      const browserBytes = await ownMemoryOf(this.browserPid);
      if (browserBytes !== undefined && browserBytes > this.maxBytes) {
        await this.on.browserOver(browserBytes).catch(() => undefined);
        // A closed context's stored data leaves the browser process's memory within a second or two;
        // looked at sooner, it would still count, and the next renders be stopped for it.
        this.browserQuietUntil = Date.now() + BROWSER_QUIET_MS;
      }
    } finally {
      this.polling = false;
    }
  }

  /** Each renderer past the bound killed; then, while all of them together hold more than theirs, the largest. */
  private async checkRenderers(pids: readonly number[]): Promise<void> {
    const sizes = await Promise.all(pids.map(async (pid) => ({ pid, bytes: await ownMemoryOf(pid) })));
    const within: { pid: number; bytes: number }[] = [];
    for (const { pid, bytes } of sizes) {
      if (bytes === undefined) continue;
      if (bytes > this.maxBytes) this.kill(pid, bytes);
      else within.push({ pid, bytes });
    }
    let total = within.reduce((sum, r) => sum + r.bytes, 0);
    for (const r of within.sort((a, b) => b.bytes - a.bytes)) {
      if (total <= this.allRenderersMaxBytes) break;
      if (this.kill(r.pid, r.bytes)) total -= r.bytes;
    }
  }

  /** Whether it was killed (false: gone on its own meanwhile). */
  private kill(pid: number, bytes: number): boolean {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return false;
    }
    this.lastKillAt = Date.now();
    this.on.rendererKilled(pid, bytes);
    return true;
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
