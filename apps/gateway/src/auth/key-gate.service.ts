import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { KeyIdentity } from '@drael/contracts';
import { ApiError } from '../errors/api-error.js';
import { RateLimiter, type RateDecision } from '../rate-limit/rate-limiter.service.js';
import { putRateLimitHeaders, setRateLimitHeaders } from '../rate-limit/rate-limit-headers.js';
import { missingApiKey, type KeyRecheck } from './identity.js';
import { KeyVerifier } from './key-verifier.service.js';
import { recordRateLimitRefusal } from '../metrics/gateway.metrics.js';

/** `Authorization: Bearer drael_...` (OpenAI SDKs send this); `x-api-key` is accepted too. */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  const x = headers['x-api-key'];
  return typeof x === 'string' && x ? x : undefined;
}

/**
 * The one admission rule of every keyed route, whichever way the request came in (the route
 * access hook for Fastify's routes, the hot routes for their own): verifies the key with
 * billing (cached briefly), counts the request against the key's limits and sets the rate-limit
 * headers on the response before any handler can write a byte. No key or a bad one: 401; over
 * the limit: 429 with Retry-After.
 */
@Injectable()
export class KeyGate {
  constructor(
    private readonly keys: KeyVerifier,
    private readonly limiter: RateLimiter,
  ) {}

  /**
   * The request's key as a KeyRecheck: a lookup in the verifier's cache (billing is asked at most
   * once per key per AUTH_CACHE_TTL_MS), counted against no rate limit.
   */
  recheckOf(headers: IncomingHttpHeaders): KeyRecheck {
    // Read when a recheck comes (most requests have one turn and none).
    return async () => {
      const apiKey = apiKeyOf(headers);
      if (apiKey === undefined) throw missingApiKey();
      await this.keys.verify(apiKey);
    };
  }

  async admit(headers: IncomingHttpHeaders, res: ServerResponse): Promise<KeyIdentity> {
    const { identity, decision } = await this.decide(headers);
    setRateLimitHeaders(res, decision);
    if (!decision.allowed) throw refused(decision);
    return identity;
  }

  /**
   * As admit, but an admitted request's rate-limit headers go into `head`, which its answer writes
   * in its one writeHead (the hot chat completions route); a refusal still sets them on `res`,
   * whose error envelope is written next.
   */
  async admitInto(headers: IncomingHttpHeaders, res: ServerResponse, head: Record<string, string>): Promise<KeyIdentity> {
    const { identity, decision } = await this.decide(headers);
    if (!decision.allowed) {
      setRateLimitHeaders(res, decision);
      throw refused(decision);
    }
    putRateLimitHeaders(head, decision);
    return identity;
  }

  /**
   * admitInto (or, without `head`, admit) without a promise, for the common case: a key whose
   * verdict is cached and a rate-limit lease with budget left. Undefined when either is missing
   * (admitInto / admit then do the round trips).
   */
  admitNow(headers: IncomingHttpHeaders, res: ServerResponse, head?: Record<string, string>): KeyIdentity | undefined {
    const apiKey = apiKeyOf(headers);
    const identity = apiKey === undefined ? undefined : this.keys.cachedIdentity(apiKey);
    if (!identity) return undefined;
    const decision = this.limiter.consumeLeased(identity.key_id, identity.rate_limit);
    if (!decision) return undefined;
    if (!decision.allowed) {
      setRateLimitHeaders(res, decision);
      throw refused(decision);
    }
    if (head) putRateLimitHeaders(head, decision);
    else setRateLimitHeaders(res, decision);
    return identity;
  }

  private async decide(headers: IncomingHttpHeaders): Promise<{ identity: KeyIdentity; decision: RateDecision }> {
    const apiKey = apiKeyOf(headers);
    if (!apiKey) {
      throw missingApiKey();
    }
    const identity = await this.keys.verify(apiKey);
    return { identity, decision: await this.limiter.consume(identity.key_id, identity.rate_limit) };
  }
}

function refused(decision: RateDecision): ApiError {
  recordRateLimitRefusal();
  return new ApiError('rate_limit_exceeded', `Rate limit reached: ${decision.limit} requests per ${decision.window} for this key. Retry after ${decision.retryAfterS}s.`);
}
