import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { testPrefix } from '@drael/test-support';
import { ResponseStore } from '../src/responses/response.store.js';
import { ResponsesConfigSchema } from '../src/responses/responses.config.js';
import { newResponse } from '../src/responses/response-object.js';
import { REDIS_URL } from './responses.support.js';

const prefix = `test:${testPrefix('resp-store')}:`;
const store = new ResponseStore(ResponsesConfigSchema.parse({ REDIS_URL, RESPONSES_KEY_PREFIX: prefix, RESPONSES_TTL_S: '120' }));
const redis = new Redis(REDIS_URL);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await store.onApplicationShutdown();
});

describe('stored responses in Redis (real server)', () => {
  it('are keyed by account: another account can neither read, continue nor delete them', async () => {
    const response = newResponse({ model: 'm', input: 'x' });
    await store.save('acct-a', { response, messages: [{ role: 'user', content: 'x' }], loaded: [] });
    expect((await store.load('acct-a', response.id))?.stored.response.id).toBe(response.id);
    expect(await store.load('acct-b', response.id)).toBeUndefined();
    expect(await store.delete('acct-b', response.id)).toBe(false);
    expect(await store.load('acct-a', response.id)).toBeDefined();
    expect(await redis.keys(`${prefix}acct-a:*`)).toEqual([`${prefix}acct-a:${response.id}`]);
    expect(await store.delete('acct-a', response.id)).toBe(true);
    expect(await store.load('acct-a', response.id)).toBeUndefined();
  });

  it('expire after the configured TTL', async () => {
    const response = newResponse({ model: 'm', input: 'x' });
    await store.save('acct-a', { response, messages: [], loaded: [] });
    const ttl = await redis.ttl(`${prefix}acct-a:${response.id}`);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
  });

  describe('bounded', () => {
    // 4 KiB of conversation a response; one response at most 8 KiB, an account's at most 10 KiB.
    const bounded = new ResponseStore(
      ResponsesConfigSchema.parse({ REDIS_URL, RESPONSES_KEY_PREFIX: prefix, RESPONSES_TTL_S: '120', RESPONSES_MAX_BYTES: '8192', RESPONSES_ACCOUNT_MAX_BYTES: '10240' }),
    );
    afterAll(() => bounded.onApplicationShutdown());
    const sized = (kib: number) => {
      const response = newResponse({ model: 'm', input: 'x' });
      return { response, messages: [{ role: 'user' as const, content: 'x'.repeat(kib * 1024) }], loaded: [] };
    };
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      );

    it('refuses one response over RESPONSES_MAX_BYTES (413 payload_too_large) and stores nothing of it', async () => {
      const big = sized(9);
      expect(await errorOf(bounded.save('acct-big', big))).toMatchObject({ code: 'payload_too_large', status: 413 });
      expect(await bounded.load('acct-big', big.response.id)).toBeUndefined();
      expect(await errorOf(bounded.admit('acct-big', 9 * 1024))).toMatchObject({ code: 'payload_too_large' });
    });

    it("refuses an account's response past RESPONSES_ACCOUNT_MAX_BYTES (429 quota_exceeded); a delete frees its room; other accounts are not touched", async () => {
      const [first, second, third] = [sized(4), sized(4), sized(4)];
      await bounded.save('acct-full', first);
      await bounded.save('acct-full', second);
      expect(await errorOf(bounded.save('acct-full', third))).toMatchObject({ code: 'quota_exceeded', status: 429 });
      expect(await bounded.load('acct-full', third.response.id)).toBeUndefined();
      expect(await errorOf(bounded.admit('acct-full', 4 * 1024))).toMatchObject({ code: 'quota_exceeded' });
      await bounded.admit('acct-other', 4 * 1024);
      await bounded.save('acct-other', sized(4));
      // Saving the same response again (its size replaced, not added) is no new use.
      await bounded.save('acct-full', second);
      expect(await bounded.delete('acct-full', first.response.id)).toBe(true);
      await bounded.admit('acct-full', 4 * 1024);
      await bounded.save('acct-full', third);
    });

    it("an expired response leaves the account's total", async () => {
      const [first, second] = [sized(4), sized(4)];
      await bounded.save('acct-exp', first);
      await bounded.save('acct-exp', second);
      expect(await errorOf(bounded.admit('acct-exp', 4 * 1024))).toMatchObject({ code: 'quota_exceeded' });
      // As if both had expired: their index entries' expiry in the past, their records gone.
      await redis.zadd(`${prefix}~index:acct-exp`, 'XX', 1, first.response.id, 1, second.response.id);
      await redis.del(`${prefix}acct-exp:${first.response.id}`, `${prefix}acct-exp:${second.response.id}`);
      await bounded.admit('acct-exp', 8 * 1024);
    });
  });

  // F6 (multi-replica fault pass): accounts each under their own bound filled the Redis that rate
  // limits and agent-run's queue share, since nothing bounded them together. Two stores on one
  // Redis are two gateway replicas: the installation's count is theirs, kept in Redis.
  describe('bounded over the whole installation, across replicas', () => {
    const sized = (kib: number) => {
      const response = newResponse({ model: 'm', input: 'x' });
      return { response, messages: [{ role: 'user' as const, content: 'x'.repeat(kib * 1024) }], loaded: [] };
    };
    const bytesOf = (stored: unknown) => Buffer.byteLength(JSON.stringify(stored));
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      );
    const installation = `test:${testPrefix('resp-total')}:`;
    // Room for three responses of 4 KiB over every account; each account may keep two.
    const one = bytesOf(sized(4));
    const config = {
      REDIS_URL,
      RESPONSES_KEY_PREFIX: installation,
      RESPONSES_TTL_S: '120',
      RESPONSES_ACCOUNT_MAX_BYTES: String(2 * one + 100),
      RESPONSES_TOTAL_MAX_BYTES: String(3 * one + 100),
    };
    const [replicaA, replicaB] = [new ResponseStore(ResponsesConfigSchema.parse(config)), new ResponseStore(ResponsesConfigSchema.parse(config))];
    afterAll(async () => {
      await Promise.all([replicaA.onApplicationShutdown(), replicaB.onApplicationShutdown()]);
      const keys = await redis.keys(`${installation}*`);
      if (keys.length) await redis.del(...keys);
    });

    it('refuses a new store past RESPONSES_TOTAL_MAX_BYTES (429 quota_exceeded, as the account bound) on every replica, each account under its own; a delete or an expiry gives the room back', async () => {
      const [first, second, third, fourth] = [sized(4), sized(4), sized(4), sized(4)];
      await replicaA.save('acct-1', first);
      await replicaB.save('acct-2', second);
      await replicaA.save('acct-3', third);
      // acct-4 holds nothing, far under its bound: the installation is full, on both replicas.
      const refused = await errorOf(replicaB.save('acct-4', fourth));
      expect(refused).toMatchObject({ code: 'quota_exceeded', status: 429, param: 'store' });
      expect((refused as Error).message).not.toMatch(/\d{4,}/);
      expect(await replicaB.load('acct-4', fourth.response.id)).toBeUndefined();
      for (const replica of [replicaA, replicaB]) expect(await errorOf(replica.admit('acct-4', 4 * 1024))).toMatchObject({ code: 'quota_exceeded' });
      // Saving a stored response again replaces its size, it adds nothing.
      await replicaB.save('acct-1', first);

      // A delete on one replica frees the room on the other.
      expect(await replicaA.delete('acct-2', second.response.id)).toBe(true);
      await replicaB.admit('acct-4', 4 * 1024);
      await replicaB.save('acct-4', fourth);
      expect(await errorOf(replicaA.admit('acct-5', 4 * 1024))).toMatchObject({ code: 'quota_exceeded' });

      // An expired response leaves the installation's total (it would otherwise only ever grow).
      await redis.zadd(`${installation}~all:index`, 'XX', 1, `${installation}acct-1:${first.response.id}`);
      await redis.del(`${installation}acct-1:${first.response.id}`);
      await replicaA.admit('acct-5', 4 * 1024);
      await replicaA.save('acct-5', sized(4));
      expect(Number(await redis.hget(`${installation}~all:sizes`, '#total'))).toBe(3 * one);
    });

    it('two replicas saving at once for different accounts cannot both take the last room', async () => {
      const prefix2 = `${installation}race:`;
      const cfg = { ...config, RESPONSES_KEY_PREFIX: prefix2 };
      const [a, b] = [new ResponseStore(ResponsesConfigSchema.parse(cfg)), new ResponseStore(ResponsesConfigSchema.parse(cfg))];
      try {
        await a.save('acct-r1', sized(4));
        await b.save('acct-r2', sized(4));
        const results = await Promise.all([errorOf(a.save('acct-r3', sized(4))), errorOf(b.save('acct-r4', sized(4))), errorOf(a.save('acct-r5', sized(4)))]);
        expect(results.filter((r) => r === undefined)).toHaveLength(1);
        expect(results.filter((r) => (r as { code?: string } | undefined)?.code === 'quota_exceeded')).toHaveLength(2);
      } finally {
        await Promise.all([a.onApplicationShutdown(), b.onApplicationShutdown()]);
      }
    });
  });
});
