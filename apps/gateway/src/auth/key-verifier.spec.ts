import { describe, expect, it } from 'vitest';
import type { KeyIdentity } from '@drael/contracts';
import type { NatsRpcClient } from '@drael/nats-rpc';
import type { GatewayConfig } from '../config/config.schema.js';
import { KeyVerifier } from './key-verifier.service.js';

const identity: KeyIdentity = { account_id: 'acct', key_id: 'key-1', tool_level: 'l1_http', rate_limit: { per_minute: 60, per_hour: 1000 }, plan: 'free', expires_at: null };

/** billing.keys.verify.v1 answered by hand: each lookup waits until the test answers it. */
function billingByHand() {
  const asked: ((identity: KeyIdentity) => void)[] = [];
  const nats = { request: () => new Promise<KeyIdentity>((resolve) => asked.push(resolve)) } as unknown as NatsRpcClient;
  const verifier = new KeyVerifier(nats, { AUTH_CACHE_TTL_MS: 60_000, AUTH_CACHE_MAX_KEYS: 100 } as GatewayConfig);
  return { verifier, asked };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyVerifier and revocations', () => {
  it('a verified key is answered from the cache until it is forgotten, then asked again', async () => {
    const { verifier, asked } = billingByHand();
    const first = verifier.verify('drael_a');
    await tick();
    asked[0]!(identity);
    await expect(first).resolves.toEqual(identity);
    await expect(verifier.verify('drael_a')).resolves.toEqual(identity);
    expect(asked).toHaveLength(1);
    expect(verifier.forgetKey('key-1')).toBe(true);
    expect(verifier.forgetKey('key-1')).toBe(false);
    void verifier.verify('drael_a');
    await tick();
    expect(asked).toHaveLength(2);
  });

  it('a lookup in flight when a revocation lands is not cached, and a request after the revocation asks billing afresh', async () => {
    const { verifier, asked } = billingByHand();
    const before = verifier.verify('drael_a');
    await tick();
    expect(asked).toHaveLength(1);
    // The revocation is heard while billing's answer (read before it was committed) is on its way.
    verifier.forgetKey('key-1');
    // A request after the revocation does not join the lookup that may predate it.
    const after = verifier.verify('drael_a');
    await tick();
    expect(asked).toHaveLength(2);
    asked[0]!(identity);
    await expect(before).resolves.toEqual(identity);
    // The stale answer was not cached: the next request waits for the fresh lookup.
    let nextSettled = false;
    const next = verifier.verify('drael_a').finally(() => (nextSettled = true));
    await tick();
    expect(nextSettled).toBe(false);
    expect(asked).toHaveLength(2);
    asked[1]!(identity);
    await expect(after).resolves.toEqual(identity);
    await expect(next).resolves.toEqual(identity);
  });
});
