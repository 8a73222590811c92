import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunSlots, tenantShareOf } from './run-slots.js';

/** Records the order in which acquisitions get their slot. */
function recorder(slots: RunSlots) {
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  const acquire = (tenant: string, label: string, options?: Parameters<RunSlots['acquire']>[1]) =>
    slots.acquire(tenant, options).then((release) => {
      order.push(label);
      releases.set(label, release);
      return release;
    });
  return { order, releases, acquire };
}

const flush = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('RunSlots', () => {
  it('runs up to max at once, queues up to queueMax, refuses the rest with the retryable sandbox_busy', async () => {
    const slots = new RunSlots({ max: 2, queueMax: 1, maxPerTenant: 2, queueMaxPerTenant: 1 });
    const a = await slots.acquire('t');
    const b = await slots.acquire('t');
    let cGot = false;
    const c = slots.acquire('t').then((release) => {
      cGot = true;
      return release;
    });
    await expect(slots.acquire('u')).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'replica' } });
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

  it("one tenant gets at most its share of the slots and of the queue, past it sandbox_busy naming the tenant's share; the others keep theirs", async () => {
    const slots = new RunSlots({ max: 4, queueMax: 8, maxPerTenant: 2, queueMaxPerTenant: 2 });
    await slots.acquire('flood');
    await slots.acquire('flood');
    // Slots are free, but not for this tenant: it waits, up to its queue share.
    const waiting = [slots.acquire('flood'), slots.acquire('flood')];
    const refused = slots.acquire('flood');
    await expect(refused).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'tenant', running: 2, queued: 2 } });
    await expect(refused).rejects.toThrow(/this tenant's share/);
    expect(slots.statsOf('flood')).toEqual({ active: 2, queued: 2 });
    // Another tenant runs at once, on the slots the flood may not take.
    const other = await slots.acquire('victim');
    expect(slots.stats).toMatchObject({ active: 3, queued: 2 });
    other();
    expect(waiting).toHaveLength(2);
  });

  it('serves the waiting tenants in turn: one tenant’s long queue is not in front of another’s single run', async () => {
    const slots = new RunSlots({ max: 1, queueMax: 10, maxPerTenant: 1, queueMaxPerTenant: 10 });
    const { order, releases, acquire } = recorder(slots);
    const first = await slots.acquire('a');
    for (const [tenant, label] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['a', 'a3'],
      ['b', 'b1'],
      ['c', 'c1'],
      ['b', 'b2'],
    ] as const)
      void acquire(tenant, label);
    first();
    // Each run, once it has its slot, ends and frees it for the next.
    for (let i = 0; i < 6; i++) {
      await flush();
      releases.get(order.at(-1)!)!();
    }
    // Round-robin over the tenants that wait, each tenant's runs in their order.
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(slots.stats).toMatchObject({ active: 0, queued: 0 });
  });

  it('a freed slot skips a tenant at its share and goes to the next one waiting', async () => {
    const slots = new RunSlots({ max: 2, queueMax: 10, maxPerTenant: 1, queueMaxPerTenant: 10 });
    const { order, acquire } = recorder(slots);
    const a = await slots.acquire('a');
    const b = await slots.acquire('b');
    void acquire('a', 'a2');
    void acquire('c', 'c1');
    // b's slot frees: a is first in line but at its share (1 running), so c gets it.
    b();
    await flush();
    expect(order).toEqual(['c1']);
    a();
    await flush();
    expect(order).toEqual(['c1', 'a2']);
  });

  it('a waiter whose deadline passes leaves the queue refused and never gets a slot', async () => {
    vi.useFakeTimers();
    const slots = new RunSlots({ max: 1, queueMax: 4, maxPerTenant: 1, queueMaxPerTenant: 4 });
    const { order, acquire } = recorder(slots);
    const first = await slots.acquire('a');
    const late = acquire('b', 'late', { deadline: Date.now() + 1000 });
    const onTime = acquire('c', 'onTime', { deadline: Date.now() + 60_000 });
    late.catch(() => undefined);
    vi.advanceTimersByTime(1001);
    await expect(late).rejects.toMatchObject({ code: 'sandbox_busy', retryable: true, details: { share: 'deadline' } });
    // Its queue place is free at once.
    expect(slots.stats).toMatchObject({ active: 1, queued: 1 });
    first();
    (await onTime)();
    expect(order).toEqual(['onTime']);
    // A deadline already past is refused at once when the run would have to wait, not when a slot is free.
    const again = await slots.acquire('a', { deadline: Date.now() - 1 });
    await expect(slots.acquire('b', { deadline: Date.now() - 1 })).rejects.toMatchObject({ details: { share: 'deadline' } });
    again();
  });

  it('a cancelled waiter leaves the queue at once', async () => {
    const slots = new RunSlots({ max: 1, queueMax: 1, maxPerTenant: 1, queueMaxPerTenant: 1 });
    const first = await slots.acquire('a');
    const abort = new AbortController();
    const waiting = slots.acquire('b', { signal: abort.signal });
    expect(slots.stats.queued).toBe(1);
    abort.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(slots.stats).toMatchObject({ active: 1, queued: 0 });
    // The freed queue place takes another run, and the slot goes to it, not to the cancelled one.
    const next = slots.acquire('c');
    first();
    (await next)();
    expect(slots.stats).toMatchObject({ active: 0, queued: 0 });
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
