/** Counts handler executions in progress, so shutdown can wait for them before closing the connection. */
class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  enter(): void {
    this.count++;
  }

  leave(): void {
    this.count--;
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  get size(): number {
    return this.count;
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`, whichever comes first. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

export const inFlight = new InFlight();
