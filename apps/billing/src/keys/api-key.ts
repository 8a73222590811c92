import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'drael_';

/**
 * A new key: `drael_` + 32 random bytes (256 bits) in base64url. Shown once, never stored.
 */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * What is stored instead of the key: sha256, hex. A plain fast hash is the right tool here, not a
 * slow password KDF (bcrypt, argon2): those exist to make guessing LOW-entropy secrets expensive,
 * while a 256-bit random key cannot be guessed at any hash speed. A fast hash also lets every
 * request be verified in microseconds and looked up by an exact, indexed match.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The start of a key, enough to tell keys apart in a listing and useless to an attacker. */
export function keyHint(key: string): string {
  return `${key.slice(0, API_KEY_PREFIX.length + 4)}…`;
}

/** Cheap shape check before any lookup: prefix and base64url body of the right length. */
export function looksLikeApiKey(key: string): boolean {
  return /^drael_[A-Za-z0-9_-]{43}$/.test(key);
}
