import type { Provider } from '@nestjs/common';
import type { ReceiptKey, ReceiptKeySet } from '@drael/contracts';
import { ReceiptSigner } from '@drael/receipts';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';

/**
 * The key that signs receipts and run ends, and the set billing publishes for verifiers: the signer
 * and every key that verifies without signing (BILLING_RECEIPT_VERIFY_KEYS: retired by a rotation,
 * or published ahead of one). Verifiers pick a signature's key by its key_id, so receipts signed
 * before a rotation, and chains signed by replicas of both keys during its rollout, still verify.
 */
export class ReceiptKeyring {
  readonly published: ReceiptKeySet;

  constructor(
    readonly signer: ReceiptSigner,
    verifyOnly: ReadonlyArray<Omit<ReceiptKey, 'algorithm'>>,
  ) {
    const signing: ReceiptKey = { key_id: signer.keyId, public_key: signer.publicKey, algorithm: 'ed25519' };
    // One id, one key: a verifier could not tell which of two keys an id means.
    const clash = verifyOnly.find((k) => k.key_id === signer.keyId && k.public_key !== signer.publicKey);
    if (clash) throw new Error(`BILLING_RECEIPT_VERIFY_KEYS names ${clash.key_id}, the signing key's id (BILLING_RECEIPT_KEY_ID), with another public key`);
    const others = verifyOnly.filter((k) => k.key_id !== signer.keyId).map((k): ReceiptKey => ({ key_id: k.key_id, public_key: k.public_key, algorithm: 'ed25519' }));
    this.published = { ...signing, keys: [signing, ...others] };
  }
}

/** The keyring from config; null when this installation has no receipt key (agent steps are then refused). */
export const RECEIPT_KEYRING = Symbol('RECEIPT_KEYRING');

export const receiptKeyringProvider: Provider = {
  provide: RECEIPT_KEYRING,
  inject: [BILLING_CONFIG],
  useFactory: (config: BillingConfig): ReceiptKeyring | null =>
    config.BILLING_RECEIPT_KEY ? new ReceiptKeyring(new ReceiptSigner(config.BILLING_RECEIPT_KEY, config.BILLING_RECEIPT_KEY_ID), config.BILLING_RECEIPT_VERIFY_KEYS) : null,
};
