import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Receipt } from '@drael/contracts';
import { chainHead, keccak256Hex, ReceiptSigner } from '@drael/receipts';

const signer = new ReceiptSigner('07'.repeat(32), 'k1');
const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'receipts.cli.js');
const dir = mkdtempSync(join(tmpdir(), 'receipts-cli-'));

function bundleFile(mutate?: (receipts: Receipt[]) => void, endSigner = signer): string {
  const receipts: Receipt[] = [];
  for (let i = 0; i < 3; i++) {
    receipts.push(
      signer.signReceipt({
        version: 1,
        id: `rcpt_${i}`,
        issued_at: new Date(0).toISOString(),
        account_id: 'acct',
        kind: 'inference.chat',
        cost_micros: 5,
        usage: {},
        input_fingerprint: keccak256Hex(Buffer.from(`i${i}`)),
        output_fingerprint: keccak256Hex(Buffer.from(`o${i}`)),
        run: { id: 'run_cli', sequence: i, previous_receipt_hash: receipts[i - 1]?.hash ?? null },
      }),
    );
  }
  const runEnd = endSigner.signRunEnd('run_cli', 3, chainHead(receipts.map((r) => r.hash)));
  mutate?.(receipts);
  const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ run_id: 'run_cli', receipts, run_end: runEnd, public_key: signer.publicKey, key_id: 'k1' }));
  return file;
}

const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('drael-receipts CLI (built)', () => {
  it.each(['--help', '-h', 'verify --help', 'help'])('`%s` prints the usage with its defaults and exits 0', (line) => {
    const r = run(...line.split(' '));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: drael-receipts verify');
    expect(r.stdout).toContain('(default: one line of text)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('an unknown option is a usage error (exit 2) naming it, without a stack trace', () => {
    const r = run('verify', '--bogus');
    expect(r.status).toBe(2);
    expect(r.stdout).toContain('--bogus');
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at /);
  });

  it('says valid and exits 0 for an intact chain', () => {
    const r = run('verify', bundleFile(), '--public-key', signer.publicKey);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^valid: run run_cli, 3 receipts, head [0-9a-f]{64}/);
  });

  it('exits 1 and names the problem for a cut tail', () => {
    const r = run(
      'verify',
      bundleFile((rs) => rs.pop()),
      '--public-key',
      signer.publicKey,
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('signed for 3 receipts, 2 present');
  });

  it('exits 1 under another public key', () => {
    const r = run('verify', bundleFile(), '--public-key', new ReceiptSigner('08'.repeat(32), 'k').publicKey);
    expect(r.status).toBe(1);
  });

  it('exits 2 without a public key, or with both a key and --key-from-billing', () => {
    expect(run('verify', bundleFile()).status).toBe(2);
    expect(run('verify', bundleFile(), '--public-key', signer.publicKey, '--key-from-billing').status).toBe(2);
  });

  it('takes a key with its id, and checks each signature only under the key its id names', () => {
    expect(run('verify', bundleFile(), '--public-key', `k1:${signer.publicKey}`).status).toBe(0);
    const other = run('verify', bundleFile(), '--public-key', `k9:${signer.publicKey}`);
    expect(other.status).toBe(1);
    expect(other.stdout).toContain('receipt 0: signed with key "k1", which billing does not publish');
    expect(run('verify', bundleFile(), '--public-key', 'k1:abcd').status).toBe(2);
    expect(run('verify', bundleFile(), '--public-key', `k 1:${signer.publicKey}`).status).toBe(2);
  });

  it('verifies a run signed across a key rotation with both published keys, and not with one', () => {
    const next = new ReceiptSigner('09'.repeat(32), 'k2');
    // Receipt 2 (the same payload, so the same hash) and the run end signed by the next key, as a replica already rolled would.
    const file = bundleFile((receipts) => {
      receipts[2] = next.signReceipt(receipts[2]!.payload);
    }, next);
    expect(run('verify', file, '--public-key', `k1:${signer.publicKey}`, '--public-key', `k2:${next.publicKey}`).status).toBe(0);
    const one = run('verify', file, '--public-key', `k2:${next.publicKey}`);
    expect(one.status).toBe(1);
    expect(one.stdout).toContain('signed with key "k1"');
  });
});
