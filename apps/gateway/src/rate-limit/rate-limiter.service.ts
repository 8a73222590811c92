import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type Result } from 'ioredis';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { recordRateLimitRedisDown } from '../metrics/gateway.metrics.js';
import type { RedisDownPolicy } from './rate-limit.config.js';

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

export interface KeyLimits {
  readonly per_minute: number;
  readonly per_hour: number;
}

// Spec 04: a key has a per-minute and a per-hour request limit.
const MINUTE_S = 60;
const HOUR_S = 3_600;

/**
 * Takes up to ARGV[3] requests of the key's budget in both windows at once, in one call. Each
 * window is a fixed-window counter created with its expiry on first use (rate-limiter-flexible's
 * counter, same key names). Grants min(asked, left in the minute, left in the hour), possibly 0
 * (refused: nothing is counted). Returns grant, minute count, minute ms-to-reset, hour count,
 * hour ms-to-reset; counts include the grant.
 */
const TAKE_LUA = `
local function open(key, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local ttl = redis.call('pttl', key)
  if ttl < 0 then
    redis.call('expire', key, seconds)
    ttl = seconds * 1000
  end
  return tonumber(redis.call('get', key)), ttl
end
local minute, minuteMs = open(KEYS[1], ARGV[4])
local hour, hourMs = open(KEYS[2], ARGV[5])
local grant = math.min(tonumber(ARGV[3]), tonumber(ARGV[1]) - minute, tonumber(ARGV[2]) - hour)
if grant > 0 then
  minute = redis.call('incrby', KEYS[1], grant)
  hour = redis.call('incrby', KEYS[2], grant)
else
  grant = 0
end
return {grant, minute, minuteMs, hour, hourMs}
`;

type TakeReply = [grant: number, minute: number, minuteMs: number, hour: number, hourMs: number];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    draelRateTake(minuteKey: string, hourKey: string, perMinute: number, perHour: number, ask: number, minuteS: number, hourS: number): Result<TakeReply, Context>;
  }
}

/**
 * Budget this replica took from Redis for one key and has not used yet. `minute`/`hour` are the
 * windows' shared counts as Redis reported them at the take (the lease included); used requests
 * leave `left`, so remaining = limit - count + left.
 */
interface Lease {
  readonly limits: KeyLimits;
  left: number;
  readonly minute: number;
  readonly hour: number;
  readonly minuteEndsAt: number;
  readonly hourEndsAt: number;
}

interface KeyState {
  lease?: Lease;
  /** A take from Redis in flight: requests of the same key wait for it instead of adding theirs. */
  taking?: Promise<void>;
}

/**
 * Per-key request limits (spec 04: per minute and per hour), counted in Redis so every gateway
 * replica shares them (docs/decisions/0002-gateway-hot-path.md).
 *
 * A replica takes budget from Redis in leases: one Lua script takes n requests of both windows
 * in one round trip, and the next n-1 requests of the key are counted here without Redis. n is
 * RATE_LIMIT_LEASE_FRACTION of the key's smaller limit (at least 1: keys with small limits get
 * one round trip per request and exact counts). A lease is never more than what is left in
 * Redis, so all replicas together never admit more than the limit; what one replica has leased
 * and not used yet is refused to the others until the window ends (at most a lease per
 * replica), and another replica's use shows in this one's remaining count at its next take.
 * Profiling put one Redis round trip per request at about 40% of a naive proxy's whole CPU cost
 * per request (the socket write and read, ioredis's command and promise machinery), which alone
 * broke the gateway's CPU budget (bench/gateway-passthrough).
 *
 * rate-limiter-flexible's RateLimiterRedis counts one window per round trip and one request per
 * call, so the shared counting is this script. When Redis fails, RATE_LIMIT_ON_REDIS_DOWN decides
 * (rate-limit.config.ts): rate-limiter-flexible's in-process limiter stands in (limits then hold per
 * replica), or every request is refused with a retryable 503.
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly minutePrefix: string;
  private readonly hourPrefix: string;
  private readonly leaseFraction: number;
  private readonly maxKeys: number;
  private readonly keys = new Map<string, KeyState>();
  private readonly insurance = new Map<string, RateLimiterMemory>();
  private readonly onRedisDown: RedisDownPolicy;
  private readonly logger = new Logger('rate-limit');
  /** Since when the shared counters are unreachable (undefined: they answer). */
  private redisDownSince?: number;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
      enableAutoPipelining: true,
      commandTimeout: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
    });
    this.onRedisDown = config.RATE_LIMIT_ON_REDIS_DOWN;
    this.redis.on('error', () => undefined); // reported through the insurance limiter's use; never crash
    this.redis.defineCommand('draelRateTake', { numberOfKeys: 2, lua: TAKE_LUA });
    // The key names RateLimiterRedis used (`<prefix><window>:<key id>`), so counters carry over.
    this.minutePrefix = `${config.RATE_LIMIT_KEY_PREFIX}minute:`;
    this.hourPrefix = `${config.RATE_LIMIT_KEY_PREFIX}hour:`;
    this.leaseFraction = config.RATE_LIMIT_LEASE_FRACTION;
    this.maxKeys = config.AUTH_CACHE_MAX_KEYS;
  }

  /** Readiness detail: the shared counters' Redis answers (without it limits hold per replica). */
  async ping(): Promise<void> {
    if (this.redis.status !== 'ready') throw new Error(`redis connection ${this.redis.status}`);
    await this.redis.ping();
  }

  /**
   * One request out of this replica's lease for the key, synchronously; undefined when there is
   * no usable lease (or a take is in flight), and consume() must be asked.
   */
  consumeLeased(keyId: string, limits: KeyLimits): RateDecision | undefined {
    const state = this.keys.get(keyId);
    if (!state?.lease || state.taking) return undefined;
    return takeLeased(state, limits, Date.now());
  }

  /**
   * Counts one request of this key against both windows. Resolves synchronously-fast (no I/O)
   * while this replica holds a lease for the key.
   */
  async consume(keyId: string, limits: KeyLimits): Promise<RateDecision> {
    let state = this.keys.get(keyId);
    if (!state) {
      state = {};
      this.remember(keyId, state);
    }
    for (;;) {
      const leased = state.lease && takeLeased(state, limits, Date.now());
      if (leased) return leased;
      if (!state.taking) break;
      await state.taking;
    }
    let done!: () => void;
    state.taking = new Promise<void>((resolve) => (done = resolve));
    try {
      return await this.take(keyId, state, limits);
    } finally {
      state.taking = undefined;
      done();
    }
  }

  /** Asks Redis for a lease; this request takes the first of it. */
  private async take(keyId: string, state: KeyState, limits: KeyLimits): Promise<RateDecision> {
    const ask = leaseSize(limits, this.leaseFraction);
    let reply: TakeReply;
    try {
      reply = await this.redis.draelRateTake(this.minutePrefix + keyId, this.hourPrefix + keyId, limits.per_minute, limits.per_hour, ask, MINUTE_S, HOUR_S);
    } catch (err) {
      state.lease = undefined;
      return this.redisDown(keyId, limits, err);
    }
    this.redisBack();
    const [grant, minute, minuteMs, hour, hourMs] = reply;
    const now = Date.now();
    if (!(grant > 0)) {
      state.lease = undefined;
      // Refused: nothing was counted; the counts are what Redis has.
      return decide([minute + 1, minuteMs, hour + 1, hourMs], limits);
    }
    // A take in a window's last millisecond is counted in that window and Redis reports 0 ms left
    // of it (Redis expires a key only after its millisecond): the lease is good for this request
    // and the window's end is a millisecond on, so the next request takes from the new window.
    // Read as ending now, the fresh lease was stale at once and the request had no decision (a
    // 500, about once an hour under load: test/rate-limit-window-edge.spec.ts).
    const lease: Lease = { limits, left: grant, minute, hour, minuteEndsAt: now + Math.max(1, minuteMs), hourEndsAt: now + Math.max(1, hourMs) };
    state.lease = lease;
    return useLease(lease, now);
  }

  /**
   * Redis did not count this request: the configured policy answers it, counted in
   * drael_gateway_rate_limit_redis_down_decisions_total{policy}; the first one of an outage is logged.
   */
  private redisDown(keyId: string, limits: KeyLimits, err: unknown): Promise<RateDecision> {
    recordRateLimitRedisDown(this.onRedisDown);
    if (this.redisDownSince === undefined) {
      this.redisDownSince = Date.now();
      const why = err instanceof Error ? err.message : String(err);
      this.logger.warn(
        this.onRedisDown === 'fail_open'
          ? `redis unreachable (${why}): rate limits are now counted per replica (RATE_LIMIT_ON_REDIS_DOWN=fail_open), up to limit x replicas, until it answers again`
          : `redis unreachable (${why}): every rate-limited request is refused with 503 (RATE_LIMIT_ON_REDIS_DOWN=fail_closed) until it answers again`,
      );
    }
    if (this.onRedisDown === 'fail_closed') {
      return Promise.reject(new ApiError('service_unavailable', 'Rate limiting is unavailable (its store cannot be reached); retry shortly.'));
    }
    return this.consumeInProcess(keyId, limits);
  }

  /** Redis answered again: say so once, with how long it was out. */
  private redisBack(): void {
    if (this.redisDownSince === undefined) return;
    const outMs = Date.now() - this.redisDownSince;
    this.redisDownSince = undefined;
    this.logger.warn(`redis answers again after ${outMs} ms: rate limits are shared across replicas again`);
  }

  /** Redis unreachable: the same windows counted in this replica only, one request at a time. */
  private async consumeInProcess(keyId: string, limits: KeyLimits): Promise<RateDecision> {
    const [m, h] = await Promise.all([consumeMemory(this.memoryLimiter(MINUTE_S, limits.per_minute), keyId), consumeMemory(this.memoryLimiter(HOUR_S, limits.per_hour), keyId)]);
    return decide([m.consumedPoints, m.msBeforeNext, h.consumedPoints, h.msBeforeNext], limits);
  }

  private memoryLimiter(seconds: number, points: number): RateLimiterMemory {
    const id = `${seconds}:${points}`;
    let l = this.insurance.get(id);
    if (!l) {
      l = new RateLimiterMemory({ points, duration: seconds });
      this.insurance.set(id, l);
    }
    return l;
  }

  /** Keeps per-key state for at most as many keys as the key cache (oldest dropped first). */
  private remember(keyId: string, state: KeyState): void {
    this.keys.set(keyId, state);
    if (this.keys.size > this.maxKeys) {
      for (const [id, s] of this.keys) {
        if (this.keys.size <= this.maxKeys) break;
        if (!s.taking) this.keys.delete(id);
      }
    }
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

/** How many requests one take from Redis asks for. */
export function leaseSize(limits: KeyLimits, fraction: number): number {
  return Math.max(1, Math.floor(Math.min(limits.per_minute, limits.per_hour) * fraction));
}

/** One request out of the key's lease, or undefined when the lease is used up, stale or for other limits. */
function takeLeased(state: KeyState, limits: KeyLimits, now: number): RateDecision | undefined {
  const lease = state.lease!;
  if (lease.left <= 0 || now >= lease.minuteEndsAt || now >= lease.hourEndsAt || lease.limits.per_minute !== limits.per_minute || lease.limits.per_hour !== limits.per_hour) {
    state.lease = undefined;
    return undefined;
  }
  return useLease(lease, now);
}

/** One request out of a lease with budget left in windows that have not ended. */
function useLease(lease: Lease, now: number): RateDecision {
  lease.left--;
  return decide([lease.minute - lease.left, lease.minuteEndsAt - now, lease.hour - lease.left, lease.hourEndsAt - now], lease.limits);
}

/** RateLimiterMemory rejects with the result when over its points; here only the count matters. */
async function consumeMemory(limiter: RateLimiterMemory, keyId: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(keyId, 1);
  } catch (res) {
    if (res instanceof RateLimiterRes) return res;
    throw res;
  }
}

/**
 * From both windows' counts (this request included): refused when either is past its limit; the
 * headers report the window that refused (the longest wait), else the one with the least left.
 */
export function decide([minuteCount, minuteMs, hourCount, hourMs]: readonly [number, number, number, number], limits: KeyLimits): RateDecision {
  const minuteLeft = limits.per_minute - minuteCount;
  const hourLeft = limits.per_hour - hourCount;
  const minuteOver = minuteLeft < 0;
  const hourOver = hourLeft < 0;
  const hour = minuteOver || hourOver ? hourOver && (!minuteOver || hourMs > minuteMs) : hourLeft < minuteLeft;
  const limit = hour ? limits.per_hour : limits.per_minute;
  const left = hour ? hourLeft : minuteLeft;
  const resetMs = hour ? hourMs : minuteMs;
  return {
    allowed: !minuteOver && !hourOver,
    limit,
    remaining: Math.max(0, left),
    resetMs,
    window: hour ? 'hour' : 'minute',
    retryAfterS: Math.max(1, Math.ceil(resetMs / 1000)),
  };
}
