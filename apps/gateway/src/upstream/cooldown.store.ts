import { Redis, type Result } from 'ioredis';
import { FAILURE_KINDS, type CooldownState, type Deployment, type FailureKind } from './deployment.js';
import { upstreamMetrics } from '../metrics/gateway.metrics.js';

export interface CooldownSettings {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly failuresToCool: number;
  readonly failureWindowMs: number;
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
  readonly syncMs: number;
}

// Counts a failure and reports the count in one round trip; the window starts at the first failure.
const COUNT_FAILURE = `
local n = redis.call('incr', KEYS[1])
if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end
return n`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    draelCountFailure(key: string, windowMs: number): Result<number, Context>;
  }
}

/**
 * Deployment cooldowns shared by every gateway replica (README "Model routing"): a cooldown is a
 * Redis key `<prefix>cool:<deployment>` holding `{until, reason}`, kept past `until` for as long
 * again so that the deployment is probed (its first success clears the key; a failure cools it at
 * once). Failures in a row are counted in `<prefix>fail:<deployment>`. Each replica mirrors the
 * keys in memory, so choosing a deployment never waits for Redis: changes are published on
 * `<prefix>events` and heard at once, and every key is re-read each `syncMs` in case a message
 * was missed. Redis down: each replica goes on with what it knows and cools on its own counts.
 */
export class CooldownStore {
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly byName: ReadonlyMap<string, Deployment>;
  private readonly channel: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    deployments: readonly Deployment[],
    private readonly settings: CooldownSettings,
    private readonly warn: (message: string) => void,
  ) {
    this.byName = new Map(deployments.map((d) => [d.name, d]));
    this.channel = `${settings.keyPrefix}events`;
    const options = { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false } as const;
    this.redis = new Redis(settings.redisUrl, options);
    this.subscriber = new Redis(settings.redisUrl, { ...options, enableOfflineQueue: true });
    this.redis.defineCommand('draelCountFailure', { numberOfKeys: 1, lua: COUNT_FAILURE });
    // ioredis reconnects by itself; a down Redis must not flood the log or crash the process.
    for (const r of [this.redis, this.subscriber]) r.on('error', () => undefined);
  }

  async start(): Promise<void> {
    if (this.byName.size === 0) return;
    this.subscriber.on('message', (_channel: string, message: string) => this.apply(message));
    try {
      await Promise.all([this.redis.connect(), this.subscriber.connect()]);
      await this.subscriber.subscribe(this.channel);
      await this.sync();
    } catch (err) {
      this.warn(`router: Redis unreachable at boot (${(err as Error).message}); cooldowns are this replica's own until it answers`);
    }
    this.timer = setInterval(() => void this.sync().catch(() => undefined), this.settings.syncMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.redis.disconnect();
    this.subscriber.disconnect();
  }

  /**
   * A failed attempt. Cools the deployment (here at once, then for every replica) when it was
   * being probed, answered 429, or has now failed `failuresToCool` times in a row.
   */
  recordFailure(d: Deployment, kind: FailureKind, retryAfterMs?: number): void {
    const now = Date.now();
    d.localFailures++;
    if (kind === 'rate_limited') {
      const ms = retryAfterMs ?? this.settings.cooldownMs;
      if (ms > 0) this.cool(d, kind, Math.min(ms, this.settings.maxCooldownMs), now);
      return;
    }
    if (d.cooldown !== undefined) {
      // Failed while being probed (or while cooling, when every deployment was out): straight back.
      this.cool(d, kind, this.settings.cooldownMs, now);
      return;
    }
    if (this.redis.status !== 'ready') {
      if (d.localFailures >= this.settings.failuresToCool) this.cool(d, kind, this.settings.cooldownMs, now);
      return;
    }
    this.redis
      .draelCountFailure(this.failKey(d), this.settings.failureWindowMs)
      .then((n) => {
        if (n >= this.settings.failuresToCool && d.cooldown === undefined) this.cool(d, kind, this.settings.cooldownMs, Date.now());
      })
      .catch(() => {
        if (d.localFailures >= this.settings.failuresToCool) this.cool(d, kind, this.settings.cooldownMs, Date.now());
      });
  }

  /** A deployment answered: a probe that succeeded brings it back everywhere; failures in a row end. */
  recordSuccess(d: Deployment): void {
    if (d.localFailures === 0 && d.cooldown === undefined) return;
    d.localFailures = 0;
    const wasCooled = d.cooldown !== undefined;
    if (wasCooled && d.cooldown!.until > Date.now()) return; // answered while every deployment was out: keep the cooldown
    d.cooldown = undefined;
    if (this.redis.status !== 'ready') return;
    const pipeline = this.redis.multi().del(this.failKey(d));
    if (wasCooled) pipeline.del(this.coolKey(d)).publish(this.channel, JSON.stringify({ name: d.name, state: null }));
    void pipeline.exec().catch(() => undefined);
  }

  private cool(d: Deployment, reason: FailureKind, ms: number, now: number): void {
    const state: CooldownState = { until: now + ms, reason };
    d.cooldown = state;
    d.localFailures = 0;
    d.stats.cooldowns++;
    upstreamMetrics.cooldown(d.config.alias, d.name);
    this.warn(`router: deployment ${d.name} (alias ${d.config.alias}) cooled for ${ms} ms after ${reason}`);
    if (this.redis.status !== 'ready') return;
    // Kept as long again past `until`: the probing period every replica sees.
    const ttl = ms + Math.max(ms, this.settings.cooldownMs);
    void this.redis
      .multi()
      .set(this.coolKey(d), JSON.stringify(state), 'PX', ttl)
      .del(this.failKey(d))
      .publish(this.channel, JSON.stringify({ name: d.name, state }))
      .exec()
      .catch(() => undefined);
  }

  /** Re-reads every deployment's key: what this replica may have missed while unsubscribed. */
  private async sync(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    const names = [...this.byName.keys()];
    const values = await this.redis.mget(names.map((n) => `${this.settings.keyPrefix}cool:${n}`));
    names.forEach((name, i) => {
      const d = this.byName.get(name)!;
      const state = this.stateOf(parseJson(values[i] ?? null));
      // A cooldown this replica set itself may not have reached Redis yet; never drop a newer one.
      if (state) d.cooldown = state;
      else if (d.cooldown && d.cooldown.until <= Date.now()) d.cooldown = undefined;
    });
  }

  /**
   * A change another replica published. Anything that can write to Redis can publish here, so a
   * message of any other shape (not JSON, `null`, an unknown deployment or reason, a time that is
   * not a date) changes nothing: it must neither end the process (this runs in ioredis's
   * listener, where nothing catches) nor cool a deployment for good.
   */
  private apply(message: string): void {
    let event: unknown;
    try {
      event = JSON.parse(message);
    } catch {
      return;
    }
    if (typeof event !== 'object' || event === null) return;
    const { name, state } = event as { name?: unknown; state?: unknown };
    const d = typeof name === 'string' ? this.byName.get(name) : undefined;
    if (!d) return;
    d.cooldown = state === null ? undefined : (this.stateOf(state) ?? d.cooldown);
  }

  /**
   * A cooldown as stored or published, or undefined when it is not one. Its end is kept within
   * the longest cooldown this replica would set itself (maxCooldownMs from now): whatever wrote
   * it, no deployment is taken out for longer.
   */
  private stateOf(value: unknown): CooldownState | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const { until, reason } = value as { until?: unknown; reason?: unknown };
    if (typeof until !== 'number' || !Number.isFinite(until) || !isFailureKind(reason)) return undefined;
    return { until: Math.min(until, Date.now() + this.settings.maxCooldownMs), reason };
  }

  private coolKey(d: Deployment): string {
    return `${this.settings.keyPrefix}cool:${d.name}`;
  }

  private failKey(d: Deployment): string {
    return `${this.settings.keyPrefix}fail:${d.name}`;
  }
}

function parseJson(raw: string | null): unknown {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function isFailureKind(value: unknown): value is FailureKind {
  return (FAILURE_KINDS as readonly unknown[]).includes(value);
}
