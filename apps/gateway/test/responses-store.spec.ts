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
});
