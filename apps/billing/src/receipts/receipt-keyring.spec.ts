import { describe, expect, it } from 'vitest';
import { ReceiptSigner } from '@drael/receipts';
import { configSchema } from '../config/config.schema.js';
import { receiptKeyringProvider, type ReceiptKeyring } from './receipt-keyring.provider.js';

const SEED = '11'.repeat(32);
const RETIRED = new ReceiptSigner('22'.repeat(32), 'k0').publicKey;
const NEXT = new ReceiptSigner('33'.repeat(32), 'k2').publicKey;

const keyringOf = (env: Record<string, string>): ReceiptKeyring | null =>
  (receiptKeyringProvider as { useFactory: (c: unknown) => ReceiptKeyring | null }).useFactory(configSchema.parse({ BILLING_RECEIPT_KEY: SEED, ...env }));

describe('the published receipt keys (BILLING_RECEIPT_VERIFY_KEYS)', () => {
  it('publish the signing key first, then every key that verifies without signing', () => {
    const ring = keyringOf({ BILLING_RECEIPT_KEY_ID: 'k1', BILLING_RECEIPT_VERIFY_KEYS: ` k0:${RETIRED.toUpperCase()} , k2:${NEXT}` })!;
    const signing = { key_id: 'k1', public_key: new ReceiptSigner(SEED, 'k1').publicKey, algorithm: 'ed25519' };
    expect(ring.published).toEqual({
      ...signing,
      keys: [signing, { key_id: 'k0', public_key: RETIRED, algorithm: 'ed25519' }, { key_id: 'k2', public_key: NEXT, algorithm: 'ed25519' }],
    });
  });

  it('without any, publish the signing key alone', () => {
    expect(keyringOf({})).not.toBeNull();
    expect(keyringOf({})!.published.keys.map((k) => k.key_id)).toEqual(['k1']);
  });

  it('list the signing key again harmlessly, but refuse to boot when its id names another key', () => {
    const own = new ReceiptSigner(SEED, 'k1').publicKey;
    expect(keyringOf({ BILLING_RECEIPT_VERIFY_KEYS: `k1:${own}` })!.published.keys).toHaveLength(1);
    expect(() => keyringOf({ BILLING_RECEIPT_VERIFY_KEYS: `k1:${RETIRED}` })).toThrow(/k1, the signing key's id/);
  });

  it.each([
    ['no colon', RETIRED],
    ['a short key', 'k0:abcd'],
    ['a bad id', `k 0:${RETIRED}`],
    ['an id too long', `${'k'.repeat(33)}:${RETIRED}`],
    ['a third part', `k0:${RETIRED}:x`],
    ['an id twice', `k0:${RETIRED},k0:${NEXT}`],
    ['too many keys', Array.from({ length: 16 }, (_, i) => `k${i + 10}:${RETIRED}`).join(',')],
  ])('refuse a malformed list (%s): the service does not boot on it', (_, value) => {
    expect(() => configSchema.parse({ BILLING_RECEIPT_KEY: SEED, BILLING_RECEIPT_VERIFY_KEYS: value })).toThrow(/BILLING_RECEIPT_VERIFY_KEYS|id:hex|twice|at most/);
  });
});
