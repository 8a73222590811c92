import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { hexToBytes } from '@noble/hashes/utils.js';

export { ZERO_HEAD, canonicalBytes, chainHead, extendHead, fingerprint, hashPayload, keccak256Hex } from './receipt-chain.js';

// DER of Ed25519 keys is a fixed prefix and the 32 raw bytes (RFC 8410): PKCS#8 for the private
// seed, SPKI for the public key.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** An Ed25519 private key from its 32-byte seed. Ed25519 is node:crypto's (OpenSSL): RFC 8032 signatures. */
export function ed25519PrivateKey(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 secret key is 32 bytes (64 hex characters)');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** The raw 32-byte public key, hex: the last 32 bytes of its SPKI DER. */
export function publicKeyHexOf(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
}

export function signBytes(privateKey: KeyObject | Uint8Array, message: Uint8Array): string {
  const key = privateKey instanceof Uint8Array ? ed25519PrivateKey(privateKey) : privateKey;
  return sign(null, message, key).toString('hex');
}

export function verifySignature(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  try {
    const raw = hexToBytes(publicKeyHex);
    if (raw.length !== 32) return false;
    const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
    return verify(null, message, key, hexToBytes(signatureHex));
  } catch {
    return false;
  }
}
