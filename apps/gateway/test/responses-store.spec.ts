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
    expect((await store.load('acct-a', response.id))?.response.id).toBe(response.id);
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
});
