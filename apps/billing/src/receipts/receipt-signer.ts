import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Receipt, ReceiptPayload, RunEnd } from '@drael/contracts';

// canonicalize 2.x is CommonJS (module.exports = fn) but its .d.ts declares an ES default export,
// so under NodeNext TypeScript sees the namespace; at run time the default import is the function.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

// spec 03: the chain head starts from 32 zero bytes: keccak256(… keccak256(0x00…00 ‖ h0) … ‖ hn).
export const ZERO_HEAD = '00'.repeat(32);

// PKCS#8 DER of an Ed25519 private key is this fixed prefix and the 32-byte seed (RFC 8410).
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The signed bytes: JSON canonicalized by RFC 8785 (JCS), so any verifier rebuilds them exactly. */
export function canonicalBytes(value: unknown): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalized');
  return utf8ToBytes(text);
}

/** keccak256 (the original Keccak padding, as in Ethereum), NOT NIST SHA3-256. */
export function keccak256Hex(bytes: Uint8Array): string {
  return bytesToHex(keccak_256(bytes));
}

export function chainHead(receiptHashes: readonly string[]): string {
  return receiptHashes.reduce((head, h) => keccak256Hex(concatBytes(hexToBytes(head), hexToBytes(h))), ZERO_HEAD);
}

/**
 * Billing's receipt signer: each billed agent step's receipt and each run's end are signed here,
 * where the money is settled (ARCHITECTURE: billing issues each step's receipt). Ed25519 is
 * node:crypto's (OpenSSL): the same RFC 8032 signatures as @noble/curves at about a fiftieth of
 * the CPU, and billing signs on every agent step; keccak256 stays @noble/hashes (node has only
 * NIST SHA3). The verifier lives with agent-run and the CLI; both ends pin the same test vectors
 * (receipt-signer.spec.ts here, receipts.spec.ts in agent-run), so they cannot drift apart unnoticed.
 */
export class ReceiptSigner {
  readonly publicKey: string;
  private readonly privateKey: KeyObject;

  constructor(
    secretKeyHex: string,
    readonly keyId: string,
  ) {
    const seed = hexToBytes(secretKeyHex);
    if (seed.length !== 32) throw new Error('an Ed25519 secret key is 32 bytes (64 hex characters)');
    this.privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    // The raw public key is the last 32 bytes of its SPKI DER.
    this.publicKey = createPublicKey(this.privateKey).export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
  }

  signReceipt(payload: ReceiptPayload): Receipt {
    const bytes = canonicalBytes(payload);
    return { payload, hash: keccak256Hex(bytes), key_id: this.keyId, signature: this.sign(bytes) };
  }

  signRunEnd(runId: string, receiptCount: number, receiptHead: string): RunEnd {
    const payload = { version: 1 as const, type: 'run_end' as const, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead };
    return { payload, key_id: this.keyId, signature: this.sign(canonicalBytes(payload)) };
  }

  private sign(bytes: Uint8Array): string {
    return sign(null, bytes, this.privateKey).toString('hex');
  }
}
