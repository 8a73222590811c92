import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DecryptError, FieldCipher } from './field-cipher.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ref = { table: 'runs', id: 'run_1', column: 'task' };

describe('FieldCipher (AES-256-GCM at rest)', () => {
  const cipher = new FieldCipher(new Map([['k1', k1]]), 'k1');

  it('round-trips, and never stores the plaintext', () => {
    const sealed = cipher.encrypt('print("secret task")', ref);
    expect(sealed).toMatch(/^enc1:k1:/);
    expect(sealed).not.toContain('secret');
    expect(cipher.decrypt(sealed, ref)).toBe('print("secret task")');
  });

  it('uses a fresh IV each time', () => {
    expect(cipher.encrypt('x', ref)).not.toBe(cipher.encrypt('x', ref));
  });

  it('fails to decrypt a ciphertext moved to another row', () => {
    const sealed = cipher.encrypt('task of run 1', ref);
    expect(() => cipher.decrypt(sealed, { ...ref, id: 'run_2' })).toThrow(DecryptError);
  });

  it('fails to decrypt a ciphertext moved to another column or table', () => {
    const sealed = cipher.encrypt('task', ref);
    expect(() => cipher.decrypt(sealed, { ...ref, column: 'output' })).toThrow(/failed authentication/);
    expect(() => cipher.decrypt(sealed, { ...ref, table: 'agents' })).toThrow(/failed authentication/);
  });

  it('fails on a flipped ciphertext bit', () => {
    const sealed = cipher.encrypt('task', ref);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    parts[3] = body.toString('base64url');
    expect(() => cipher.decrypt(parts.join(':'), ref)).toThrow(DecryptError);
  });

  it('rotates: old values open with the key they name, new values use the active key', () => {
    const old = cipher.encrypt('sealed under k1', ref);
    const rotated = new FieldCipher(
      new Map([
        ['k1', k1],
        ['k2', k2],
      ]),
      'k2',
    );
    expect(rotated.decrypt(old, ref)).toBe('sealed under k1');
    const fresh = rotated.encrypt('sealed under k2', ref);
    expect(FieldCipher.keyIdOf(fresh)).toBe('k2');
    expect(() => cipher.decrypt(fresh, ref)).toThrow(/data key k2 is not configured/);
  });

  it('parses keys from configuration and refuses a short key', () => {
    const c = FieldCipher.fromConfig(`a:${k1.toString('base64')}, b:${k2.toString('base64')}`, 'b');
    expect(c.decrypt(c.encrypt('v', ref), ref)).toBe('v');
    expect(() => FieldCipher.fromConfig(`a:${randomBytes(16).toString('base64')}`, 'a')).toThrow(/not 32 bytes/);
    expect(() => FieldCipher.fromConfig(`a:${k1.toString('base64')}`, 'z')).toThrow(/active data key/);
  });
});
