import canonicalizeModule from 'canonicalize';
import { ed25519 } from '@noble/curves/ed25519.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

// canonicalize 2.x is CommonJS (module.exports = fn) but its .d.ts declares an ES default export,
// so under NodeNext TypeScript sees the namespace; at run time the default import is the function.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

// spec 03: the chain head starts from 32 zero bytes: keccak256(… keccak256(0x00…00 ‖ h0) … ‖ hn).
export const ZERO_HEAD = '00'.repeat(32);

/**
 * The bytes that are hashed and signed: JSON canonicalized by RFC 8785 (JCS), so any verifier in any
 * language rebuilds exactly the same bytes from the JSON it received.
 */
export function canonicalBytes(value: unknown): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return utf8ToBytes(text);
}

/** keccak256 (the original Keccak padding, as in Ethereum), NOT NIST SHA3-256. */
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

export function signBytes(secretKey: Uint8Array, message: Uint8Array): string {
  return bytesToHex(ed25519.sign(message, secretKey));
}

export function verifySignature(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  try {
    return ed25519.verify(hexToBytes(signatureHex), message, hexToBytes(publicKeyHex));
  } catch {
    return false;
  }
}

export function publicKeyOf(secretKey: Uint8Array): string {
  return bytesToHex(ed25519.getPublicKey(secretKey));
}
