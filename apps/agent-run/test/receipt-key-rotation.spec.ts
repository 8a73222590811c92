import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingCatalog } from '@drael/contracts';
import { ReceiptSigner } from '@drael/receipts';
import { startServiceProcess, type ServiceProcess } from '@drael/test-support';
import { verifyReceipts } from '../src/receipts/receipt-verifier.js';
import { startStack, type Stack } from './harness.js';

// Fault pass F7: billing's receipt key changed (a rotation) and every receipt signed before it
// stopped verifying, and agent-run, which kept the first key it was told for its whole life,
// failed every run signed after it. Billing now publishes a key set (the signing key and those
// that still verify, BILLING_RECEIPT_VERIFY_KEYS) and verifiers pick each signature's key by id.

let stack: Stack;
let rotated: ServiceProcess | undefined;

beforeAll(async () => {
  stack = await startStack();
}, 120_000);
afterAll(async () => {
  await rotated?.stop('SIGKILL');
  await stack?.stop();
});

const text = (content: string) => ({ type: 'text' as const, content, usage: { prompt_tokens: 10, completion_tokens: 5 } });

describe('a receipt key rotation (F7)', () => {
  it('keeps the runs signed before it verifiable, and verifies the runs signed after it at once', async () => {
    const acct = await stack.account();
    const agent = await stack.createAgent(acct);
    stack.upstream.setTurns([text('before the rotation')]);
    const before = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'one' })).id);
    expect(before).toMatchObject({ status: 'succeeded', receipt_count: 1 });
    expect(await stack.call('verifyRun', { account_id: acct, run_id: before.id })).toMatchObject({ valid: true });

    // The rotation's last rollout: k2 signs, k1 (published on every replica) verifies only.
    const oldKey = new ReceiptSigner(stack.receiptKey, 'k1');
    const newSeed = randomBytes(32).toString('hex');
    rotated = await startServiceProcess(
      'billing',
      {
        NATS_URL: stack.env.NATS_URL!,
        DRAEL_NATS_PREFIX: stack.prefix,
        DATABASE_URL: stack.billingDb.url,
        DATABASE_POOL_SIZE: '4',
        LOG_LEVEL: 'warn',
        BILLING_RECEIPT_KEY: newSeed,
        BILLING_RECEIPT_KEY_ID: 'k2',
        BILLING_RECEIPT_VERIFY_KEYS: `k1:${oldKey.publicKey}`,
      },
      { readyTimeoutMs: 60_000 },
    );
    await stack.billing.stop('SIGTERM');

    const published = await stack.rpc.request(billingCatalog.receiptKey, {}, { timeoutMs: 15_000 });
    expect(published.key_id).toBe('k2');
    expect(published.keys.map((k) => [k.key_id, k.public_key])).toEqual([
      ['k2', new ReceiptSigner(newSeed, 'k2').publicKey],
      ['k1', oldKey.publicKey],
    ]);

    // The run signed under k1 still verifies, in agent-run and for an outside verifier.
    expect(await stack.call('verifyRun', { account_id: acct, run_id: before.id })).toMatchObject({ valid: true, problems: [] });
    const oldBundle = await stack.call('listReceipts', { account_id: acct, run_id: before.id });
    expect(verifyReceipts(oldBundle, published.keys).valid).toBe(true);

    // A run signed under k2 verifies at once: agent-run asks again for a key its kept set lacks.
    stack.upstream.setTurns([text('after the rotation')]);
    const after = await stack.waitForRun(acct, (await stack.call('createRun', { account_id: acct, agent_id: agent.id, task: 'two' })).id);
    const newBundle = await stack.call('listReceipts', { account_id: acct, run_id: after.id });
    expect(newBundle.receipts.map((r) => r.key_id)).toEqual(['k2']);
    expect(newBundle.run_end?.key_id).toBe('k2');
    expect(await stack.call('verifyRun', { account_id: acct, run_id: after.id })).toMatchObject({ valid: true, problems: [] });
    expect(newBundle.keys.map((k) => k.key_id).sort()).toEqual(['k1', 'k2']);

    // The agent-run subject answers the same set.
    expect((await stack.call('publicKey', {})).keys.map((k) => k.key_id)).toEqual(['k2', 'k1']);
  }, 180_000);
});
