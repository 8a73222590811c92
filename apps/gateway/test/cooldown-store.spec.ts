import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { testPrefix } from '@drael/test-support';
import { CooldownStore, type CooldownSettings } from '../src/upstream/cooldown.store.js';
import { Deployment } from '../src/upstream/deployment.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Two replicas' views of the same deployments, each with its own store on the one Redis. */
function replica(settings: CooldownSettings) {
  const deployments = ['x', 'y'].map(
    (name) => new Deployment({ name, alias: 'a', base_url: 'http://h/v1', api_key: '', model: 'm', weight: 1, priority: 0, input_per_1m: 0, output_per_1m: 0 }),
  );
  const store = new CooldownStore(deployments, settings, () => undefined);
  return { store, x: deployments[0]!, y: deployments[1]! };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

const settings: CooldownSettings = {
  redisUrl: REDIS_URL,
  keyPrefix: `${testPrefix('cool')}:`,
  failuresToCool: 2,
  failureWindowMs: 60_000,
  cooldownMs: 400,
  maxCooldownMs: 60_000,
  // Long: what the second replica sees here comes from the published change, not the re-read.
  syncMs: 600_000,
};
const one = replica(settings);
const two = replica(settings);

beforeAll(async () => {
  await Promise.all([one.store.start(), two.store.start()]);
});
afterAll(async () => {
  await Promise.all([one.store.stop(), two.store.stop()]);
});

describe('CooldownStore (one Redis, two replicas)', () => {
  it('failures in a row counted across replicas cool the deployment for both', async () => {
    one.store.recordFailure(one.x, 'server_error');
    // One failure is not enough...
    await new Promise((r) => setTimeout(r, 100));
    expect(one.x.cooldown).toBeUndefined();
    // ...the second, seen by the other replica, is: the count is shared.
    two.store.recordFailure(two.x, 'timeout');
    await until(() => two.x.cooldown !== undefined, 'replica two cools x');
    await until(() => one.x.cooldown !== undefined, 'replica one hears of it');
    expect(one.x.cooldown!.reason).toBe('timeout');
    expect(one.y.cooldown).toBeUndefined();
  });

  it('once the cooldown is over the deployment is probed: a success clears it everywhere', async () => {
    await until(() => one.x.state(Date.now()) === 'probing' && two.x.state(Date.now()) === 'probing', 'both see x probing');
    one.store.recordSuccess(one.x);
    expect(one.x.state(Date.now())).toBe('healthy');
    await until(() => two.x.state(Date.now()) === 'healthy', 'replica two hears x is back');
  });

  it('a 429 cools at once for its Retry-After; a failure while probing cools again at once', async () => {
    two.store.recordFailure(two.y, 'rate_limited', 300);
    await until(() => one.y.state(Date.now()) === 'cooling', 'replica one sees y cooling');
    expect(one.y.cooldown!.reason).toBe('rate_limited');
    await until(() => one.y.state(Date.now()) === 'probing', 'y probing after its Retry-After');
    one.store.recordFailure(one.y, 'server_error');
    expect(one.y.state(Date.now())).toBe('cooling');
    await until(() => two.y.cooldown?.reason === 'server_error', 'replica two sees the new cooldown');
  });

  it('a message of another shape on the channel, or a stored cooldown of one, changes nothing and ends no process', async () => {
    // Anything that can write to Redis can publish there: a replica of another version, a typo, an attacker inside.
    const writer = new Redis(REDIS_URL);
    const channel = `${settings.keyPrefix}events`;
    try {
      // y's last cooldown (the test before) is over first: a success while cooling keeps it.
      await until(() => one.y.state(Date.now()) !== 'cooling' && two.y.state(Date.now()) !== 'cooling', 'y no longer cooling');
      one.store.recordSuccess(one.y);
      two.store.recordSuccess(two.y);
      await until(() => one.y.cooldown === undefined && two.y.cooldown === undefined, 'y healthy on both');
      const hostile = [
        'null',
        '[]',
        '"x"',
        '7',
        'not json',
        JSON.stringify({ name: 'y', state: 5 }),
        JSON.stringify({ name: 'y', state: { until: Date.now() + 60_000, reason: 'bogus' } }),
        JSON.stringify({ name: 'y', state: { until: '1e300', reason: 'timeout' } }),
        JSON.stringify({ name: 'y', state: { until: null, reason: 'timeout' } }),
        JSON.stringify({ name: { toString: 1 }, state: null }),
        JSON.stringify({ name: '__proto__', state: null }),
      ];
      for (const message of hostile) await writer.publish(channel, message);
      // A cooldown far in the future is one: it is kept within the longest this replica sets itself.
      await writer.publish(channel, JSON.stringify({ name: 'y', state: { until: 1e300, reason: 'timeout' } }));
      await until(() => one.y.cooldown !== undefined && two.y.cooldown !== undefined, 'both hear of the far cooldown');
      for (const r of [one, two]) {
        expect(r.y.cooldown!.reason).toBe('timeout');
        expect(r.y.cooldown!.until).toBeLessThanOrEqual(Date.now() + settings.maxCooldownMs);
        // Still a date: the deployment report (GET /admin/models) prints it.
        expect(new Date(r.y.cooldown!.until).toISOString()).toMatch(/^\d{4}-/);
      }
      // The same shapes stored under the key a starting replica reads.
      await writer.set(`${settings.keyPrefix}cool:x`, JSON.stringify({ until: Date.now() + 60_000, reason: 'bogus' }), 'PX', 60_000);
      await writer.set(`${settings.keyPrefix}cool:y`, 'null', 'PX', 60_000);
      const late = replica(settings);
      await late.store.start();
      try {
        expect(late.x.cooldown).toBeUndefined();
        expect(late.y.cooldown).toBeUndefined();
      } finally {
        await late.store.stop();
        await writer.del(`${settings.keyPrefix}cool:x`, `${settings.keyPrefix}cool:y`);
      }
      one.store.recordSuccess(one.y);
      two.store.recordSuccess(two.y);
    } finally {
      writer.disconnect();
    }
  });

  it('a replica that starts later reads the cooldowns already set', async () => {
    two.store.recordFailure(two.x, 'rate_limited', 30_000);
    // Once replica one has heard of it, Redis holds it.
    await until(() => one.x.cooldown?.reason === 'rate_limited', 'replica one hears of the 429');
    const late = replica(settings);
    await late.store.start();
    try {
      expect(late.x.state(Date.now())).toBe('cooling');
      expect(late.x.cooldown!.reason).toBe('rate_limited');
    } finally {
      await late.store.stop();
    }
  });
});
