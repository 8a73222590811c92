import { afterEach, describe, expect, it, vi } from 'vitest';
import { FairSlots, tenantShareOf, type FairSlotLimits, type Refusal } from './fair-slots.js';

/** The caller's typed refusal: here an error carrying the refusal as its details. */
class BusyError extends Error {
  readonly code = 'busy';
  readonly retryable = true;
  constructor(readonly details: Refusal) {
    super(`busy: ${details.share}`);
  }
}
const slotsOf = (limits: FairSlotLimits) => new FairSlots(limits, (refusal) => new BusyError(refusal));

/** Records the order in which acquisitions get their slot. */
function recorder(slots: FairSlots) {
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  const acquire = (tenant: string, label: string, options?: Parameters<FairSlots['acquire']>[1]) =>
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

describe('FairSlots', () => {
  it('runs up to max at once, queues up to queueMax, refuses the rest with the retryable a retryable refusal', async () => {
    const slots = slotsOf({ max: 2, queueMax: 1, maxPerTenant: 2, queueMaxPerTenant: 1 });
    const a = await slots.acquire('t');
    const b = await slots.acquire('t');
    let cGot = false;
    const c = slots.acquire('t').then((release) => {
      cGot = true;
      return release;
    });
    await expect(slots.acquire('u')).rejects.toMatchObject({ code: 'busy', retryable: true, details: { share: 'replica' } });
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

  it("one tenant gets at most its share of the slots and of the queue, past it a retryable refusal naming the tenant's share; the others keep theirs", async () => {
    const slots = slotsOf({ max: 4, queueMax: 8, maxPerTenant: 2, queueMaxPerTenant: 2 });
    await slots.acquire('flood');
    await slots.acquire('flood');
    // Slots are free, but not for this tenant: it waits, up to its queue share.
    const waiting = [slots.acquire('flood'), slots.acquire('flood')];
    const refused = slots.acquire('flood');
    await expect(refused).rejects.toMatchObject({ code: 'busy', retryable: true, details: { share: 'tenant', running: 2, queued: 2 } });
    // The refusal names the tenant's bounds, for the caller's message.
    await expect(refused).rejects.toMatchObject({ details: { maxPerTenant: 2, queueMaxPerTenant: 2 } });
    expect(slots.statsOf('flood')).toEqual({ active: 2, queued: 2 });
    // Another tenant runs at once, on the slots the flood may not take.
    const other = await slots.acquire('victim');
    expect(slots.stats).toMatchObject({ active: 3, queued: 2 });
    other();
    expect(waiting).toHaveLength(2);
  });

  it('serves the waiting tenants in turn: one tenant’s long queue is not in front of another’s single run', async () => {
    const slots = slotsOf({ max: 1, queueMax: 10, maxPerTenant: 1, queueMaxPerTenant: 10 });
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
    const slots = slotsOf({ max: 2, queueMax: 10, maxPerTenant: 1, queueMaxPerTenant: 10 });
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
    const slots = slotsOf({ max: 1, queueMax: 4, maxPerTenant: 1, queueMaxPerTenant: 4 });
    const { order, acquire } = recorder(slots);
    const first = await slots.acquire('a');
    const late = acquire('b', 'late', { deadline: Date.now() + 1000 });
    const onTime = acquire('c', 'onTime', { deadline: Date.now() + 60_000 });
    late.catch(() => undefined);
    vi.advanceTimersByTime(1001);
    await expect(late).rejects.toMatchObject({ code: 'busy', retryable: true, details: { share: 'deadline' } });
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
    const slots = slotsOf({ max: 1, queueMax: 1, maxPerTenant: 1, queueMaxPerTenant: 1 });
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

  it('the whole queue is bounded across tenants, each within its own share', async () => {
    const slots = slotsOf({ max: 1, queueMax: 3, maxPerTenant: 1, queueMaxPerTenant: 2 });
    const first = await slots.acquire('a');
    const waiting = [slots.acquire('a'), slots.acquire('b'), slots.acquire('c')];
    // c is within its own share (0 of 2 waiting), but the queue holds 3 of 3.
    await expect(slots.acquire('c')).rejects.toMatchObject({ details: { share: 'replica', running: 1, queued: 3, max: 1, queueMax: 3 } });
    first();
    for (const w of waiting) (await w)();
    expect(slots.stats).toMatchObject({ active: 0, queued: 0 });
  });

  it('a waiter cancelled from the middle of its tenant’s queue leaves only its own place; the others keep their order', async () => {
    const slots = slotsOf({ max: 1, queueMax: 10, maxPerTenant: 1, queueMaxPerTenant: 10 });
    const { order, releases, acquire } = recorder(slots);
    const first = await slots.acquire('a');
    const abort = new AbortController();
    void acquire('a', 'a1');
    const cancelledOne = acquire('a', 'a2', { signal: abort.signal });
    void acquire('a', 'a3');
    cancelledOne.catch(() => undefined);
    abort.abort(new Error('gave up'));
    await expect(cancelledOne).rejects.toThrow('gave up');
    expect(slots.statsOf('a')).toEqual({ active: 1, queued: 2 });
    first();
    for (let i = 0; i < 2; i++) {
      await flush();
      releases.get(order.at(-1)!)!();
    }
    expect(order).toEqual(['a1', 'a3']);
    // Aborting after the grant changes nothing: the holder releases as usual.
    abort.abort();
    expect(slots.stats).toMatchObject({ active: 0, queued: 0 });
  });

  it('an already aborted signal is refused with its reason even when a slot is free', async () => {
    const slots = slotsOf({ max: 1, queueMax: 1, maxPerTenant: 1, queueMaxPerTenant: 1 });
    await expect(slots.acquire('a', { signal: AbortSignal.abort(new Error('too late')) })).rejects.toThrow('too late');
    // A reason that is not an Error still rejects with an Error.
    await expect(slots.acquire('a', { signal: AbortSignal.abort('nope') })).rejects.toThrow(/cancelled while it waited/);
    expect(slots.stats).toMatchObject({ active: 0, queued: 0 });
  });

  it('a tenant gets half the slots and a quarter of the queue unless configured, at least 1 each', () => {
    expect(tenantShareOf({ max: 8, queueMax: 32 })).toEqual({ max: 8, queueMax: 32, maxPerTenant: 4, queueMaxPerTenant: 8 });
    expect(tenantShareOf({ max: 1, queueMax: 0 })).toEqual({ max: 1, queueMax: 0, maxPerTenant: 1, queueMaxPerTenant: 1 });
    expect(tenantShareOf({ max: 2, queueMax: 16, maxPerTenant: undefined })).toEqual({ max: 2, queueMax: 16, maxPerTenant: 1, queueMaxPerTenant: 4 });
    expect(tenantShareOf({ max: 3, queueMax: 32, maxPerTenant: 3, queueMaxPerTenant: 32 })).toMatchObject({ maxPerTenant: 3, queueMaxPerTenant: 32 });
  });
});
