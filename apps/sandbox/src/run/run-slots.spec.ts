import { describe, expect, it } from 'vitest';
import { RunSlots } from './run-slots.js';

describe('RunSlots', () => {
  it('runs up to max at once, queues up to queueMax, refuses the rest with the retryable sandbox_busy', async () => {
    const slots = new RunSlots(2, 1);
    const a = await slots.acquire();
    const b = await slots.acquire();
    let cGot = false;
    const c = slots.acquire().then((release) => {
      cGot = true;
      return release;
    });
    await expect(slots.acquire()).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true });
    expect(slots.stats).toMatchObject({ active: 2, queued: 1 });
    a();
    const releaseC = await c;
    expect(cGot).toBe(true);
    expect(slots.stats).toMatchObject({ active: 2, queued: 0 });
    // Releasing twice frees one slot only.
    b();
    b();
    expect(slots.stats.active).toBe(1);
    releaseC();
    expect(slots.stats.active).toBe(0);
  });
});
