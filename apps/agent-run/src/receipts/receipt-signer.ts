import type { Receipt, ReceiptPayload, RunEnd } from '@drael/contracts';
import { hexToBytes } from '@noble/hashes/utils.js';
import { canonicalBytes, hashPayload, publicKeyOf, signBytes } from './receipt-crypto.js';

/**
 * Signs receipts and run ends with an Ed25519 key, as billing does in production
 * (apps/billing/src/receipts): here it makes the chains the verifier's tests tamper with. Both
 * pin the same vectors, so signer and verifier cannot drift apart unnoticed.
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
    this.publicKey = publicKeyOf(this.secretKey);
  }

  signReceipt(payload: ReceiptPayload): Receipt {
    const bytes = canonicalBytes(payload);
    return { payload, hash: hashPayload(payload), key_id: this.keyId, signature: signBytes(this.secretKey, bytes) };
  }

  signRunEnd(runId: string, receiptCount: number, receiptHead: string): RunEnd {
    const payload = { version: 1 as const, type: 'run_end' as const, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead };
    return { payload, key_id: this.keyId, signature: signBytes(this.secretKey, canonicalBytes(payload)) };
  }
}
