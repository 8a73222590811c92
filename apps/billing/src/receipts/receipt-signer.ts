import canonicalizeModule from 'canonicalize';
import { ed25519 } from '@noble/curves/ed25519.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import type { Receipt, ReceiptPayload, RunEnd } from '@drael/contracts';

// canonicalize 2.x is CommonJS (module.exports = fn) but its .d.ts declares an ES default export,
// so under NodeNext TypeScript sees the namespace; at run time the default import is the function.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

// spec 03: the chain head starts from 32 zero bytes: keccak256(… keccak256(0x00…00 ‖ h0) … ‖ hn).
export const ZERO_HEAD = '00'.repeat(32);

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
 * where the money is settled (ARCHITECTURE: billing issues each step's receipt). The verifier
 * lives with agent-run and the CLI; both ends pin the same test vectors (receipt-signer.spec.ts
 * here, receipts.spec.ts in agent-run), so the two implementations cannot drift apart unnoticed.
 */
export class ReceiptSigner {
  readonly publicKey: string;
  private readonly secretKey: Uint8Array;

  constructor(
    secretKeyHex: string,
    readonly keyId: string,
  ) {
    this.secretKey = hexToBytes(secretKeyHex);
    if (this.secretKey.length !== 32) throw new Error('an Ed25519 secret key is 32 bytes (64 hex characters)');
    this.publicKey = bytesToHex(ed25519.getPublicKey(this.secretKey));
  }

  signReceipt(payload: ReceiptPayload): Receipt {
    const bytes = canonicalBytes(payload);
    return { payload, hash: keccak256Hex(bytes), key_id: this.keyId, signature: bytesToHex(ed25519.sign(bytes, this.secretKey)) };
  }

  signRunEnd(runId: string, receiptCount: number, receiptHead: string): RunEnd {
    const payload = { version: 1 as const, type: 'run_end' as const, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead };
    return { payload, key_id: this.keyId, signature: bytesToHex(ed25519.sign(canonicalBytes(payload), this.secretKey)) };
  }
}
