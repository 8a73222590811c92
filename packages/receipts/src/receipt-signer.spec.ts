import { describe, expect, it } from 'vitest';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { ReceiptPayload } from '@drael/contracts';
import { canonicalBytes, chainHead, keccak256Hex, ReceiptSigner, ZERO_HEAD } from './index.js';

// RFC 8032 section 7.1, test 1. The receipt below and its figures are the ones agent-run's verifier
// pins (apps/agent-run/src/receipts/receipts.spec.ts): the signer here and the verifier there agree.
const RFC_SECRET = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const RFC_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';

const signer = new ReceiptSigner(RFC_SECRET, 'k1');

function payload(sequence: number, previous: string | null): ReceiptPayload {
  return {
    version: 1,
    id: `rcpt_${sequence}`,
    issued_at: '2026-11-29T12:00:00.000Z',
    account_id: 'acct_1',
    kind: sequence % 2 === 0 ? 'inference.chat' : 'sandbox.execute',
    cost_micros: 100 + sequence,
    usage: { prompt_tokens: 10, completion_tokens: 5 },
    input_fingerprint: keccak256Hex(utf8ToBytes(`in${sequence}`)),
    output_fingerprint: keccak256Hex(utf8ToBytes(`out${sequence}`)),
    run: { id: 'run_test', sequence, previous_receipt_hash: previous },
  };
}

describe('billing receipt signer (pinned vectors)', () => {
  it('uses keccak256, not NIST SHA3-256', () => {
    expect(keccak256Hex(new Uint8Array())).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(keccak256Hex(new Uint8Array())).not.toBe('a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
  });

  it('derives the RFC 8032 public key and canonicalizes with JCS', () => {
    expect(signer.publicKey).toBe(RFC_PUBLIC);
    expect(Buffer.from(canonicalBytes({ b: 1, a: { d: null, c: 'x' } })).toString()).toBe('{"a":{"c":"x","d":null},"b":1}');
  });

  it('signs the pinned receipt, chain head and run end exactly as agent-run verifies them', () => {
    const r0 = signer.signReceipt(payload(0, null));
    expect(r0.hash).toBe('b93a07c90de287f29e0ea4d3003d60e5dfba911b6a39fa1cacba7a756a17d50e');
    expect(r0.signature).toBe('fc264c508328e67074a75b20dc10789c943775523ffe62726cab0021f813b8cfe5fee9365a7982c1ded7b0e1f0ed67d7bf250a7cf043989a3daeb1ba0a0d1307');
    const r1 = signer.signReceipt(payload(1, r0.hash));
    const r2 = signer.signReceipt(payload(2, r1.hash));
    expect(chainHead([r0.hash, r1.hash, r2.hash])).toBe('43c9ee25cf2b15474cff4b4b7d9ea854db9559a8b1a2cc2c1685bb11b821a749');
    expect(chainHead([])).toBe(ZERO_HEAD);
    expect(chainHead(['11'.repeat(32), '22'.repeat(32), '33'.repeat(32)])).toBe('5a3b4d09b2e1fe30db21b27d24d3b9bac1e0535b827f64897009b2347cc48700');
    const end = signer.signRunEnd('run_test', 3, chainHead([r0.hash, r1.hash, r2.hash]));
    expect(end.payload).toEqual({
      version: 1,
      type: 'run_end',
      run_id: 'run_test',
      receipt_count: 3,
      receipt_head: '43c9ee25cf2b15474cff4b4b7d9ea854db9559a8b1a2cc2c1685bb11b821a749',
    });
    expect(end.signature).toMatch(/^[0-9a-f]{128}$/);
  });
});
