import { describe, expect, it } from 'vitest';
import type { Receipt, ReceiptPayload } from '@drael/contracts';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { canonicalBytes, chainHead, fingerprint, keccak256Hex, ReceiptSigner, signBytes, ZERO_HEAD } from '@drael/receipts';
import { verifyReceipts } from './receipt-verifier.js';

// RFC 8032 section 7.1, test 1.
const RFC_SECRET = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const RFC_PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const RFC_SIG_EMPTY = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

const signer = new ReceiptSigner(RFC_SECRET, 'k1');
const KEYS = [{ key_id: 'k1', public_key: RFC_PUBLIC }];

function payload(sequence: number, previous: string | null, runId = 'run_test'): ReceiptPayload {
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
    run: { id: runId, sequence, previous_receipt_hash: previous },
  };
}

function chain(n: number, runId = 'run_test'): { receipts: Receipt[]; head: string } {
  const receipts: Receipt[] = [];
  for (let i = 0; i < n; i++) receipts.push(signer.signReceipt(payload(i, receipts[i - 1]?.hash ?? null, runId)));
  return { receipts, head: chainHead(receipts.map((r) => r.hash)) };
}

function bundle(n = 3) {
  const { receipts, head } = chain(n);
  return { run_id: 'run_test', receipts: receipts as unknown[], run_end: signer.signRunEnd('run_test', n, head) as unknown };
}

const clone = <T>(v: T): T => structuredClone(v);

describe('receipt primitives (pinned vectors)', () => {
  it('uses keccak256, not NIST SHA3-256', () => {
    expect(keccak256Hex(new Uint8Array())).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(keccak256Hex(utf8ToBytes('abc'))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    // SHA3-256("") is a7ffc6f8…; a SHA3 implementation would fail the line above.
    expect(keccak256Hex(new Uint8Array())).not.toBe('a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
  });

  it('signs with Ed25519 as RFC 8032 says', () => {
    expect(signer.publicKey).toBe(RFC_PUBLIC);
    expect(signBytes(Buffer.from(RFC_SECRET, 'hex'), new Uint8Array())).toBe(RFC_SIG_EMPTY);
  });

  it('chains the head as keccak256(keccak256(keccak256(0x00…00 ‖ h0) ‖ h1) ‖ h2)', () => {
    const h = ['11'.repeat(32), '22'.repeat(32), '33'.repeat(32)];
    const link = (a: string, b: string) => keccak256Hex(Buffer.from(a + b, 'hex'));
    expect(chainHead([])).toBe(ZERO_HEAD);
    expect(chainHead(h)).toBe(link(link(link(ZERO_HEAD, h[0]!), h[1]!), h[2]!));
    expect(chainHead(h)).toBe('5a3b4d09b2e1fe30db21b27d24d3b9bac1e0535b827f64897009b2347cc48700');
  });

  it('canonicalizes payloads with sorted keys and no whitespace (RFC 8785)', () => {
    expect(Buffer.from(canonicalBytes({ b: 1, a: { d: null, c: 'x' } })).toString()).toBe('{"a":{"c":"x","d":null},"b":1}');
  });

  it('pins a receipt hash, signature and a three-receipt head', () => {
    const { receipts, head } = chain(3);
    expect(receipts[0]!.hash).toBe('b93a07c90de287f29e0ea4d3003d60e5dfba911b6a39fa1cacba7a756a17d50e');
    expect(receipts[0]!.signature).toBe('fc264c508328e67074a75b20dc10789c943775523ffe62726cab0021f813b8cfe5fee9365a7982c1ded7b0e1f0ed67d7bf250a7cf043989a3daeb1ba0a0d1307');
    expect(receipts[1]!.payload.run.previous_receipt_hash).toBe(receipts[0]!.hash);
    expect(head).toBe('43c9ee25cf2b15474cff4b4b7d9ea854db9559a8b1a2cc2c1685bb11b821a749');
  });

  it('fingerprints depend on the salt, so content cannot be guessed from a receipt', () => {
    const a = fingerprint(new Uint8Array(32).fill(1), 'print(1)');
    const b = fingerprint(new Uint8Array(32).fill(2), 'print(1)');
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(b);
    expect(a).not.toBe(keccak256Hex(utf8ToBytes('print(1)')));
  });
});

describe('verifyReceipts', () => {
  it('accepts an intact chain', () => {
    const result = verifyReceipts(bundle(), KEYS);
    expect(result).toMatchObject({ valid: true, receipt_count: 3, problems: [] });
  });

  it('accepts a run with no receipts when its end is signed', () => {
    expect(verifyReceipts({ run_id: 'run_test', receipts: [], run_end: signer.signRunEnd('run_test', 0, ZERO_HEAD) }, KEYS).valid).toBe(true);
  });

  it('rejects a changed receipt (cost edited)', () => {
    const b = bundle();
    (b.receipts[1] as Receipt).payload.cost_micros = 1;
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/receipt 1: hash does not match/);
  });

  it('rejects a changed receipt even when its hash is recomputed (signature)', () => {
    const b = bundle();
    const r1 = b.receipts[1] as Receipt;
    r1.payload.cost_micros = 1;
    r1.hash = keccak256Hex(canonicalBytes(r1.payload));
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/receipt 1: signature is not valid/);
  });

  it('rejects a removed receipt', () => {
    const b = bundle();
    b.receipts.splice(1, 1);
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/receipt 1: carries sequence 2/);
  });

  it('rejects reordered receipts', () => {
    const b = bundle();
    [b.receipts[0], b.receipts[1]] = [b.receipts[1], b.receipts[0]];
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/sequence/);
  });

  it('rejects a cut-off tail', () => {
    const b = bundle();
    b.receipts.pop();
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/signed for 3 receipts, 2 present/);
  });

  it('rejects a cut tail whose run end was re-signed by someone else', () => {
    const b = bundle();
    b.receipts.pop();
    const forger = new ReceiptSigner('01'.repeat(32), 'k1');
    b.run_end = forger.signRunEnd('run_test', 2, chainHead((b.receipts as Receipt[]).map((r) => r.hash)));
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems).toContain('run end: signature is not valid');
  });

  it('rejects a missing run end', () => {
    const b = bundle();
    b.run_end = null;
    expect(verifyReceipts(b, KEYS).valid).toBe(false);
  });

  it('rejects a receipt from another run spliced in', () => {
    const b = bundle();
    const other = chain(3, 'run_other').receipts;
    b.receipts[2] = clone(other[2]);
    const r = verifyReceipts(b, KEYS);
    expect(r.valid).toBe(false);
    expect(r.problems.join('\n')).toMatch(/belongs to run run_other/);
  });

  it('rejects everything under the wrong public key', () => {
    const r = verifyReceipts(bundle(), [{ key_id: 'k1', public_key: new ReceiptSigner('02'.repeat(32), 'k2').publicKey }]);
    expect(r.valid).toBe(false);
    expect(r.problems.filter((p) => p.includes('signature')).length).toBe(4);
  });
});

describe('verifyReceipts across a key rotation (each signature under the key its key_id names)', () => {
  const next = new ReceiptSigner('03'.repeat(32), 'k2');
  const BOTH = [...KEYS, { key_id: 'k2', public_key: next.publicKey }];
  /** Receipts 0 and 1 signed by k1, receipt 2 and the run end by k2: a run that went on through a rollout. */
  function rotated() {
    const receipts: Receipt[] = [];
    for (let i = 0; i < 3; i++) receipts.push((i < 2 ? signer : next).signReceipt(payload(i, receipts[i - 1]?.hash ?? null)));
    return { run_id: 'run_test', receipts: receipts as unknown[], run_end: next.signRunEnd('run_test', 3, chainHead(receipts.map((r) => r.hash))) as unknown };
  }

  it('accepts a chain signed by two published keys', () => {
    expect(verifyReceipts(rotated(), BOTH)).toMatchObject({ valid: true, problems: [] });
  });

  it('names a key that is not published, and checks its signatures against no other key', () => {
    const r = verifyReceipts(rotated(), [{ key_id: 'k2', public_key: next.publicKey }]);
    expect(r.valid).toBe(false);
    expect(r.problems).toEqual(['receipt 0: signed with key "k1", which billing does not publish', 'receipt 1: signed with key "k1", which billing does not publish']);
  });

  it('rejects a receipt whose key_id was changed to another published key', () => {
    const b = rotated();
    (b.receipts[0] as Receipt).key_id = 'k2';
    const r = verifyReceipts(b, BOTH);
    expect(r.problems).toEqual(['receipt 0: signature is not valid']);
  });

  it('rejects a forger who signs under an id of their own', () => {
    const b = bundle();
    b.run_end = new ReceiptSigner('04'.repeat(32), 'forged').signRunEnd('run_test', 3, chainHead((b.receipts as Receipt[]).map((r) => r.hash)));
    expect(verifyReceipts(b, BOTH).problems).toEqual(['run end: signed with key "forged", which billing does not publish']);
  });
});
