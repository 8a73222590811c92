import type { KeyObject } from 'node:crypto';
import { hexToBytes } from '@noble/hashes/utils.js';
import type { Receipt, ReceiptPayload, RunEnd } from '@drael/contracts';
import { canonicalBytes, ed25519PrivateKey, keccak256Hex, publicKeyHexOf, signBytes } from './receipt-crypto.js';

/**
 * Signs receipts and run ends with an Ed25519 key. Billing signs every billed agent step with it
 * (ARCHITECTURE: billing issues each step's receipt); agent-run's verifier tests build the chains
 * they tamper with. One implementation, so signer and verifier cannot drift apart.
 */
export class ReceiptSigner {
  readonly publicKey: string;
  private readonly privateKey: KeyObject;

  constructor(
    secretKeyHex: string,
    readonly keyId: string,
  ) {
    this.privateKey = ed25519PrivateKey(hexToBytes(secretKeyHex));
    this.publicKey = publicKeyHexOf(this.privateKey);
  }

  signReceipt(payload: ReceiptPayload): Receipt {
    const bytes = canonicalBytes(payload);
    return { payload, hash: keccak256Hex(bytes), key_id: this.keyId, signature: signBytes(this.privateKey, bytes) };
  }

  signRunEnd(runId: string, receiptCount: number, receiptHead: string): RunEnd {
    const payload = { version: 1 as const, type: 'run_end' as const, run_id: runId, receipt_count: receiptCount, receipt_head: receiptHead };
    return { payload, key_id: this.keyId, signature: signBytes(this.privateKey, canonicalBytes(payload)) };
  }
}
