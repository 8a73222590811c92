import { hash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { billingCatalog, type KeyIdentity } from '@drael/contracts';
import { NatsRpcClient, isRpcError } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { KeyCache } from './key-cache.js';

type Verdict = { ok: true; identity: KeyIdentity } | { ok: false };

/**
 * Verifies API keys with billing (`billing.keys.verify.v1`), remembering answers briefly so most
 * requests cost no NATS round trip. Bad keys are remembered too (a flood of wrong keys does not
 * become a flood of lookups). A revoked key is dropped when billing announces it (forgetKey), and
 * stops working in any case once its entry expires (a replica that missed the announcement).
 *
 * One lookup per key at a time: the requests of a key that arrive while its verdict is being
 * fetched wait for that answer. Without it, every expiry of a busy key's entry (AUTH_CACHE_TTL_MS)
 * and every cold start sent one lookup per request in flight: 500 concurrent streams of one key
 * became a burst of lookups that a loaded billing answered past the 2 s timeout, failing streams
 * with 504 (bench/load, test/concurrent-streams.spec.ts).
 */
@Injectable()
export class KeyVerifier {
  private readonly cache: KeyCache<Verdict>;
  /** Lookups in flight, by the key's hash; each entry leaves when its answer is in. */
  private readonly lookups = new Map<string, Promise<Verdict>>();
  /** Revocations heard so far: a lookup that saw one land while it was in flight is not cached. */
  private forgets = 0;

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.cache = new KeyCache(config.AUTH_CACHE_TTL_MS, config.AUTH_CACHE_MAX_KEYS);
  }

  /** The identity of a key whose good verdict is cached, without a promise; undefined otherwise. */
  cachedIdentity(apiKey: string): KeyIdentity | undefined {
    const verdict = this.cache.get(hash('sha256', apiKey, 'base64url'));
    return verdict?.ok ? verdict.identity : undefined;
  }

  /**
   * Drops a revoked key from the cache, so its next request asks billing and is refused: called
   * when billing announces a revocation (gateway.keys.forget.v1, heard by every replica) and by
   * this gateway's admin API right after its revoke. A lookup of any key already in flight may
   * carry an answer from before the revocation: it still answers the requests already waiting for
   * it, but it is not cached, and a request that comes after this asks billing afresh. Whether this
   * replica held the key.
   */
  forgetKey(keyId: string): boolean {
    this.forgets++;
    this.lookups.clear();
    return this.cache.deleteWhere((verdict) => verdict.ok && verdict.identity.key_id === keyId) > 0;
  }

  async verify(apiKey: string): Promise<KeyIdentity> {
    // One-shot hashing: no Hash object per request (the only hashing on the request path).
    const id = hash('sha256', apiKey, 'base64url');
    const verdict = this.cache.get(id) ?? (await this.lookup(id, apiKey));
    if (!verdict.ok) throw new ApiError('invalid_api_key', 'Incorrect API key provided.');
    return verdict.identity;
  }

  /**
   * The key's verdict from billing, shared by every request of the key that asks meanwhile; cached
   * once in, unless a revocation was heard while it was in flight.
   */
  private lookup(id: string, apiKey: string): Promise<Verdict> {
    const shared = this.lookups.get(id);
    if (shared) return shared;
    const forgetsBefore = this.forgets;
    const pending: Promise<Verdict> = this.ask(apiKey)
      .then((verdict) => {
        // An expiring key is kept no longer than it lives: refused from its expiry on, not a TTL later.
        if (this.forgets === forgetsBefore)
          this.cache.set(id, verdict, verdict.ok && verdict.identity.expires_at !== null ? Date.parse(verdict.identity.expires_at) - Date.now() : Number.POSITIVE_INFINITY);
        return verdict;
      })
      .finally(() => {
        // A revocation may have cleared the map and a newer lookup of the key taken the place.
        if (this.lookups.get(id) === pending) this.lookups.delete(id);
      });
    this.lookups.set(id, pending);
    return pending;
  }

  private async ask(apiKey: string): Promise<Verdict> {
    try {
      return { ok: true, identity: await this.nats.request(billingCatalog.verifyKey, { api_key: apiKey.slice(0, 256) }) };
    } catch (err) {
      // Only a definite "no" is cached; billing being down is not the key's fault.
      // A key that cannot be checked in time means the gateway cannot serve now: 503 to retry,
      // not a 504 that reads as the request itself having been too slow.
      if (isRpcError(err) && err.code === 'timeout')
        throw new ApiError('unavailable', 'API keys cannot be checked right now (the billing service did not answer in time); retry shortly');
      if (!(isRpcError(err) && err.code === 'invalid_api_key')) throw ApiError.fromRpc(err) ?? err;
      return { ok: false };
    }
  }
}
