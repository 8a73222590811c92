import { describe, expect, it } from 'vitest';
import { RunSlots, tenantShareOf } from './run-slots.js';

// The rule itself (shares, round-robin, deadline, cancel) is tested in packages/fair-slots; this is
// what the sandbox adds: its settings' names, and its refusals as the retryable sandbox_busy.
describe('RunSlots', () => {
  it('refuses past the replica’s bounds with the retryable sandbox_busy, share replica', async () => {
    const slots = new RunSlots({ max: 1, queueMax: 1, maxPerTenant: 1, queueMaxPerTenant: 1 });
    const first = await slots.acquire('t');
    const waiting = slots.acquire('u');
    const refused = slots.acquire('v');
    await expect(refused).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'replica', running: 1, queued: 1 } });
    await expect(refused).rejects.toThrow(/the sandbox is at capacity \(1 running, 1 queued\)/);
    first();
    (await waiting)();
  });

  it("refuses past a tenant's share with sandbox_busy naming the tenant's share", async () => {
    const slots = new RunSlots({ max: 4, queueMax: 8, maxPerTenant: 2, queueMaxPerTenant: 2 });
    await slots.acquire('flood');
    await slots.acquire('flood');
    void slots.acquire('flood');
    void slots.acquire('flood');
    const refused = slots.acquire('flood');
    await expect(refused).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'tenant', running: 2, queued: 2 } });
    await expect(refused).rejects.toThrow(/this tenant's share of the sandbox is taken \(2 of its 2 runs at once, 2 of its 2 waiting\)/);
  });

  it('refuses a waiter whose deadline has passed with sandbox_busy, share deadline', async () => {
    const slots = new RunSlots({ max: 1, queueMax: 1, maxPerTenant: 1, queueMaxPerTenant: 1 });
    const first = await slots.acquire('a');
    await expect(slots.acquire('b', { deadline: Date.now() - 1 })).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'deadline' } });
    first();
  });

  it('a tenant gets half the slots and a quarter of the queue unless configured, at least 1 each', () => {
    expect(tenantShareOf({ SANDBOX_MAX_CONCURRENT: 8, SANDBOX_MAX_QUEUE: 32 })).toEqual({ max: 8, queueMax: 32, maxPerTenant: 4, queueMaxPerTenant: 8 });
    expect(tenantShareOf({ SANDBOX_MAX_CONCURRENT: 1, SANDBOX_MAX_QUEUE: 0 })).toEqual({ max: 1, queueMax: 0, maxPerTenant: 1, queueMaxPerTenant: 1 });
    expect(tenantShareOf({ SANDBOX_MAX_CONCURRENT: 3, SANDBOX_MAX_QUEUE: 32, SANDBOX_MAX_CONCURRENT_PER_TENANT: 3, SANDBOX_MAX_QUEUE_PER_TENANT: 32 })).toMatchObject({
      maxPerTenant: 3,
      queueMaxPerTenant: 32,
    });
  });
});
