import { describe, expect, it } from 'vitest';
import type { ReceiptPayload } from '@drael/contracts';
import { chainHead, keccak256Hex } from '@drael/receipts/chain';
import { ReceiptSigner } from '@drael/receipts';
import { verifyChain, type ReceiptBundle } from './verify-chain.js';

// The browser's check against chains billing's own signer makes (RFC 8032 test key 1), run under
// Node's WebCrypto, which has the same Ed25519 as the browser's.
const signer = new ReceiptSigner('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'k1');
const KEYS = [{ key_id: 'k1', public_key: signer.publicKey }];
const fp = (s: string) => keccak256Hex(new TextEncoder().encode(s));

function bundle(n = 3): ReceiptBundle {
  const receipts = [];
  let previous: string | null = null;
  for (let i = 0; i < n; i++) {
    const payload: ReceiptPayload = {
      version: 1,
      id: `rcpt_${i}`,
      issued_at: '2026-12-01T00:00:00.000Z',
      account_id: 'acct',
      kind: 'inference.chat',
      cost_micros: 30 + i,
      usage: { prompt_tokens: 10 },
      input_fingerprint: fp(`in${i}`),
      output_fingerprint: fp(`out${i}`),
      run: { id: 'run_1', sequence: i, previous_receipt_hash: previous },
    };
    const r = signer.signReceipt(payload);
    receipts.push(r);
    previous = r.hash;
  }
  return { run_id: 'run_1', receipts, run_end: signer.signRunEnd('run_1', n, chainHead(receipts.map((r) => r.hash))) };
}

describe('verifyChain (the console, in the browser)', () => {
  it('passes an intact chain and recomputes the head billing signed', async () => {
    const b = bundle();
    const v = await verifyChain(b, KEYS);
    expect(v.valid).toBe(true);
    expect(v.firstBroken).toBeUndefined();
    expect(v.head).toBe(b.run_end!.payload.receipt_head);
  });

  it('names the first broken link when a receipt is altered', async () => {
    const b = bundle();
    b.receipts[1]!.payload.cost_micros += 1;
    const v = await verifyChain(b, KEYS);
    expect(v.valid).toBe(false);
    expect(v.firstBroken).toBe('Receipt 1: its hash does not match its payload; its signature is not valid');
    expect(v.links.map((l) => l.ok)).toEqual([true, false, false, false]);
  });

  it('catches a re-hashed receipt (signature), a dropped tail (run end), a wrong key and a missing run end', async () => {
    const b = bundle();
    b.receipts[0]!.payload.cost_micros = 1;
    b.receipts[0]!.hash = keccak256Hex(new TextEncoder().encode('x'));
    expect((await verifyChain(b, KEYS)).firstBroken).toMatch(/^Receipt 0: .*signature is not valid/);

    const cut = bundle();
    cut.receipts.pop();
    expect((await verifyChain(cut, KEYS)).firstBroken).toBe(
      'Run end: it was signed for 3 receipts, 2 are present; its signed head does not match the head recomputed from the receipts',
    );

    const other = new ReceiptSigner('11'.repeat(32), 'k2');
    expect((await verifyChain(bundle(), [{ key_id: signer.keyId, public_key: other.publicKey }])).firstBroken).toMatch(/^Receipt 0: its signature is not valid/);

    const open = bundle();
    open.run_end = null;
    expect((await verifyChain(open, KEYS)).firstBroken).toMatch(/^Run end: the run end is missing/);
  });

  it('checks a chain signed across a key rotation under each signature’s own key', async () => {
    const next = new ReceiptSigner('12'.repeat(32), 'k2');
    const rotated = bundle();
    // Receipt 2 (same payload, same hash) and the run end signed by the next key, as a rolled replica would.
    rotated.receipts[2] = next.signReceipt(rotated.receipts[2]!.payload);
    rotated.run_end = next.signRunEnd('run_1', 3, rotated.run_end!.payload.receipt_head);
    const both = [...KEYS, { key_id: 'k2', public_key: next.publicKey }];
    expect((await verifyChain(rotated, both)).valid).toBe(true);
    expect((await verifyChain(rotated, KEYS)).firstBroken).toBe('Receipt 2: it is signed with key "k2", which billing does not publish');
    // A receipt relabelled with the other published key's id fails: it is checked under that key only.
    rotated.receipts[0] = { ...rotated.receipts[0]!, key_id: 'k2' };
    expect((await verifyChain(rotated, both)).firstBroken).toBe('Receipt 0: its signature is not valid');
  });
});
