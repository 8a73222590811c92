import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyHint, looksLikeApiKey } from './api-key.js';

describe('api keys', () => {
  it('start with drael_ and carry 256 random bits', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a.startsWith('drael_')).toBe(true);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(looksLikeApiKey(a)).toBe(true);
    expect(looksLikeApiKey('drael_short')).toBe(false);
    expect(looksLikeApiKey(`sk_${a.slice(6)}`)).toBe(false);
  });

  it('are stored as sha256 hex, never in the clear', () => {
    const key = generateApiKey();
    const hash = hashApiKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(6, 20));
    expect(hashApiKey(`${key}x`)).not.toBe(hash);
    expect(keyHint(key)).toBe(`${key.slice(0, 10)}…`);
  });
});
