import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

// canonicalize 2.x is CommonJS (module.exports = fn) but its .d.ts declares an ES default export,
// so under NodeNext TypeScript sees the namespace; at run time the default import is the function.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

// spec 03: the chain head starts from 32 zero bytes: keccak256(… keccak256(0x00…00 ‖ h0) … ‖ hn).
export const ZERO_HEAD = '00'.repeat(32);

// DER of Ed25519 keys is a fixed prefix and the 32 raw bytes (RFC 8410): PKCS#8 for the private
// seed, SPKI for the public key.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The bytes that are hashed and signed: JSON canonicalized by RFC 8785 (JCS), so any verifier in any
 * language rebuilds exactly the same bytes from the JSON it received.
 */
export function canonicalBytes(value: unknown): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return utf8ToBytes(text);
}

/** keccak256 (the original Keccak padding, as in Ethereum), NOT NIST SHA3-256 (node has only the latter). */
export function keccak256Hex(bytes: Uint8Array): string {
  return bytesToHex(keccak_256(bytes));
}

export function hashPayload(payload: unknown): string {
  return keccak256Hex(canonicalBytes(payload));
}

/** One link of the head: keccak256(previousHead ‖ receiptHash), both 32 raw bytes. */
export function extendHead(head: string, receiptHash: string): string {
  return keccak256Hex(concatBytes(hexToBytes(head), hexToBytes(receiptHash)));
}

export function chainHead(receiptHashes: readonly string[]): string {
  return receiptHashes.reduce(extendHead, ZERO_HEAD);
}

/** A salted fingerprint of content: proves later what was sent without the receipt holding it. */
export function fingerprint(salt: Uint8Array, content: string): string {
  return keccak256Hex(concatBytes(salt, utf8ToBytes(content)));
}

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
