import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { KeyGate } from './key-gate.service.js';
import { KeyVerifier } from './key-verifier.service.js';

/** API keys and per-key rate limits for every /v1 and /api route (a global guard). */
@Module({
  providers: [KeyVerifier, RateLimiter, KeyGate, { provide: APP_GUARD, useClass: ApiKeyGuard }],
  exports: [KeyVerifier, RateLimiter, KeyGate],
})
export class AuthModule {}
