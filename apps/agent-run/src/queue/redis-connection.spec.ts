import { describe, expect, it } from 'vitest';
import { redisConnection } from './run.queue.js';

describe('redisConnection (BullMQ from REDIS_URL)', () => {
  it('keeps TLS (rediss://) and the ACL user with its password', () => {
    expect(redisConnection('rediss://queue-user:p%40ss@redis.example.internal:6380/2')).toEqual({
      host: 'redis.example.internal',
      port: 6380,
      username: 'queue-user',
      password: 'p@ss',
      db: 2,
      tls: { servername: 'redis.example.internal' },
      maxRetriesPerRequest: null,
    });
  });

  it('plain redis:// has no TLS and no user', () => {
    expect(redisConnection('redis://127.0.0.1:6379')).toEqual({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: null });
  });

  it('refuses another scheme rather than connecting in the clear', () => {
    expect(() => redisConnection('http://redis:6379')).toThrow(/redis:\/\/ or rediss:\/\//);
  });
});
