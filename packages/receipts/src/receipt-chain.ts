import canonicalizeModule from 'canonicalize';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * The receipt chain's hashing, with nothing from Node: the console imports this module
 * (`@drael/receipts/chain`) to recompute a run's chain head in the browser, so server and browser
 * cannot disagree on the bytes. The Ed25519 parts (node:crypto) stay in receipt-crypto.ts.
 */

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

/**
 * Node's own Keccak-256 (OpenSSL's `keccak-256`), where the module runs in Node: the same bytes as
 * the portable one, 15 times faster on a large input (4 MiB: 10 against 148 ms), and the agent
 * runner fingerprints every model step's whole request on its event loop. Reached through
 * process.getBuiltinModule, so the browser build has no import of Node to resolve; a Node whose
 * OpenSSL lacks the digest (a FIPS build) keeps the portable one.
 */
const nodeCrypto = ((): typeof import('node:crypto') | undefined => {
  const crypto = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:crypto') as
    | typeof import('node:crypto')
    | undefined;
  try {
    crypto?.createHash('keccak-256');
    return crypto;
  } catch {
    return undefined;
  }
})();

/** Which Keccak-256 this process hashes with: OpenSSL's in Node, the portable one elsewhere. */
export const KECCAK_IMPLEMENTATION: 'openssl' | 'portable' = nodeCrypto ? 'openssl' : 'portable';

/** keccak256 (the original Keccak padding, as in Ethereum), NOT NIST SHA3-256. */
export function keccak256Hex(bytes: Uint8Array): string {
  return nodeCrypto ? nodeCrypto.createHash('keccak-256').update(bytes).digest('hex') : bytesToHex(keccak_256(bytes));
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

/** A published receipt key as billing answers it (billing.receipts.key.v1's `keys`). */
export interface PublishedReceiptKey {
  readonly key_id: string;
  readonly public_key: string;
}

/**
 * The public key a signature is checked against: the one published under the `key_id` it carries,
 * never another. A signature under an id nobody publishes has no key (a verifier says so), and a
 * rotation leaves every earlier receipt checkable as long as its key stays published.
 */
export function publishedKey(keys: readonly PublishedReceiptKey[], keyId: string): string | undefined {
  return keys.find((k) => k.key_id === keyId)?.public_key.toLowerCase();
}
