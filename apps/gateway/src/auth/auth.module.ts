import { Module } from '@nestjs/common';
import { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { KeyGate } from './key-gate.service.js';
import { KeyForgetListener } from './key-forget.listener.js';
import { KeyVerifier } from './key-verifier.service.js';

/**
 * API keys and per-key rate limits. KeyGate is the one admission rule: the route access hook
 * (route-access.hook.ts) calls it for every route not marked public, the hot routes for theirs.
 */
@Module({
  providers: [KeyVerifier, KeyForgetListener, RateLimiter, KeyGate],
  exports: [KeyVerifier, RateLimiter, KeyGate],
})
export class AuthModule {}
