import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';

/** What a request's rate-limit headers report: the tighter of the key's two windows. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until that window resets. */
  resetMs: number;
  /** The window that decided: 'minute' or 'hour'. */
  window: 'minute' | 'hour';
  /** When refused: seconds until a retry can succeed. */
  retryAfterS: number;
}

const WINDOWS = [
  { window: 'minute', seconds: 60 },
  { window: 'hour', seconds: 3_600 },
] as const;

/**
 * Per-key request limits (spec 04: per minute and per hour), counted in Redis so every gateway
 * replica shares them, with rate-limiter-flexible's atomic Redis counters. If Redis fails, an
 * in-process limiter with the same figures stands in (limits then hold per replica) rather than
 * refusing every request.
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.redis = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
    this.redis.on('error', () => undefined); // reported through the insurance limiter's use; never crash
  }

  private limiter(window: 'minute' | 'hour', seconds: number, points: number): RateLimiterRedis {
    const id = `${window}:${points}`;
    let l = this.limiters.get(id);
    if (!l) {
      l = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.config.RATE_LIMIT_KEY_PREFIX}${window}`,
        points,
        duration: seconds,
        insuranceLimiter: new RateLimiterMemory({ points, duration: seconds }),
      });
      this.limiters.set(id, l);
    }
    return l;
  }

  /** Counts one request of this key against both windows. */
  async consume(keyId: string, limits: { per_minute: number; per_hour: number }): Promise<RateDecision> {
    const results = await Promise.all(
      WINDOWS.map(async ({ window, seconds }) => {
        const points = window === 'minute' ? limits.per_minute : limits.per_hour;
        try {
          const res = await this.limiter(window, seconds, points).consume(keyId, 1);
          return { window, points, res, allowed: true };
        } catch (err) {
          if (err instanceof RateLimiterRes) return { window, points, res: err, allowed: false };
          throw err;
        }
      }),
    );
    const refused = results.filter((r) => !r.allowed);
    // Report the window that refused (the longest wait), else the one with the least left.
    const decisive = refused.length
      ? refused.reduce((a, b) => (b.res.msBeforeNext > a.res.msBeforeNext ? b : a))
      : results.reduce((a, b) => (b.res.remainingPoints < a.res.remainingPoints ? b : a));
    return {
      allowed: refused.length === 0,
      limit: decisive.points,
      remaining: Math.max(0, decisive.res.remainingPoints),
      resetMs: decisive.res.msBeforeNext,
      window: decisive.window,
      retryAfterS: Math.max(1, Math.ceil(decisive.res.msBeforeNext / 1000)),
    };
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}
