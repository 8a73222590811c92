import type { Provider } from '@nestjs/common';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { ReceiptSigner } from '@drael/receipts';

/** The signer from config; null when this installation has no receipt key (agent steps are then refused). */
export const RECEIPT_SIGNER = Symbol('RECEIPT_SIGNER');

export const receiptSignerProvider: Provider = {
  provide: RECEIPT_SIGNER,
  inject: [BILLING_CONFIG],
  useFactory: (config: BillingConfig): ReceiptSigner | null => (config.BILLING_RECEIPT_KEY ? new ReceiptSigner(config.BILLING_RECEIPT_KEY, config.BILLING_RECEIPT_KEY_ID) : null),
};
