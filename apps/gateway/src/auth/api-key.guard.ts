import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest, FastifyReply } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { setRateLimitHeaders } from '../rate-limit/rate-limit-headers.js';
import { KeyVerifier } from './key-verifier.service.js';
import { needsApiKey } from './public-routes.js';

/** `Authorization: Bearer drael_...` (OpenAI SDKs send this); `x-api-key` is accepted too. */
function apiKeyOf(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m?.[1];
  }
  const x = req.headers['x-api-key'];
  return typeof x === 'string' && x ? x : undefined;
}

/**
 * The global guard in front of every /v1 and /api route (public-routes.ts lists the exceptions):
 * verifies the key with billing (cached briefly), puts the caller's identity on the request,
 * counts the request against the key's limits and sets the rate-limit headers before any handler
 * can write a byte. No key or a bad one: 401; over the limit: 429 with Retry-After.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: KeyVerifier,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true; // NATS handlers of the hybrid app carry no API key
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (!needsApiKey(req.method, req.url)) return true;
    const apiKey = apiKeyOf(req);
    if (!apiKey) {
      throw new ApiError('missing_api_key', 'You didn\'t provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).');
    }
    const identity = await this.keys.verify(apiKey);
    req.identity = identity;

    const decision = await this.limiter.consume(identity.key_id, identity.rate_limit);
    setRateLimitHeaders(ctx.switchToHttp().getResponse<FastifyReply>().raw, decision);
    if (!decision.allowed) {
      throw new ApiError('rate_limit_exceeded', `Rate limit reached: ${decision.limit} requests per ${decision.window} for this key. Retry after ${decision.retryAfterS}s.`);
    }
    return true;
  }
}
