import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.js';
import { recordResponsesStoreFailure, type StoreOperation } from '../metrics/gateway.metrics.js';
import type { ChatMessage } from './chat-message.js';
import type { InputItemResource } from './input-items.js';
import type { ResponseObject } from './response-object.js';
import type { FunctionTool } from './responses.schema.js';
import { RESPONSES_CONFIG, type ResponsesConfig } from './responses.config.js';

/** A stored response: what GET returns, plus what a continuation (previous_response_id) needs. */
export interface StoredResponse {
  response: ResponseObject;
  /** The whole conversation as the upstream saw it, without the system instructions. */
  messages: ChatMessage[];
  /** Definitions tool_search had loaded by the end. */
  loaded: FunctionTool[];
  /** The request's input items (GET …/input_items); absent in responses stored before they were kept. */
  input_items?: InputItemResource[];
}

/** A stored response as read, with the bytes it takes (what a continuation of it will take at least). */
export interface LoadedResponse {
  stored: StoredResponse;
  bytes: number;
}

// One account's stored bytes: a sorted set of its response ids by expiry (ms) and a hash of each
// one's size with the running total. Expired entries leave the total when it is next read, so it
// never counts a response Redis has already let go. Scripts, so that two replicas saving for the
// same account cannot both pass the bound. A response and its accounting are written (RESERVE)
// and removed (FORGET) in one script each: a Redis lost between two commands can leave neither
// a response nobody counts nor bytes counted for a response that is not there.
const PRUNE = `
local now = tonumber(ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
local freed = 0
for _, id in ipairs(expired) do
  freed = freed + tonumber(redis.call('HGET', KEYS[2], id) or '0')
  redis.call('HDEL', KEYS[2], id)
end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
local total = math.max(0, tonumber(redis.call('HGET', KEYS[2], '#total') or '0') - freed)
redis.call('HSET', KEYS[2], '#total', total)
`;
const RESERVE = `${PRUNE}
local id, bytes, expiry, max, ttl = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local before = tonumber(redis.call('HGET', KEYS[2], id) or '0')
if total - before + bytes > max then return -1 end
redis.call('ZADD', KEYS[1], expiry, id)
redis.call('HSET', KEYS[2], id, bytes)
redis.call('HSET', KEYS[2], '#total', total - before + bytes)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('SET', KEYS[3], ARGV[7], 'PX', ttl)
return total - before + bytes
`;
const USAGE = `${PRUNE}
return total
`;
const FORGET = `
local deleted = redis.call('DEL', KEYS[3])
local bytes = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if bytes > 0 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HINCRBY', KEYS[2], '#total', -bytes)
end
redis.call('ZREM', KEYS[1], ARGV[1])
return deleted
`;

type Scripted = Redis & {
  storedReserve(index: string, sizes: string, key: string, now: number, id: string, bytes: number, expiry: number, max: number, ttlMs: number, text: string): Promise<number>;
  storedUsage(index: string, sizes: string, now: number): Promise<number>;
  storedForget(index: string, sizes: string, key: string, id: string): Promise<number>;
};

/**
 * Stored responses in Redis, one key per response under the account's prefix, so a key of one
 * account can never read, continue or delete another account's responses. Each expires after the
 * configured TTL. Bounded, since this Redis also holds the rate limits, the router's state and
 * agent-run's queue: one stored response (its whole conversation: a continuation carries its
 * history) at most RESPONSES_MAX_BYTES (413 `payload_too_large`), one account's at most
 * RESPONSES_ACCOUNT_MAX_BYTES together (429 `quota_exceeded`), both checked before the model is
 * called (`admit`) and the account's bound again when the response is saved.
 *
 * Redis failing (refused, or silent past RESPONSES_REDIS_TIMEOUT_MS: frozen, partitioned) is, for
 * every operation, one typed 503 `service_unavailable` with Retry-After (the README's rule: a
 * dependency down is 503, never 500), raised here in `command()` and nowhere else, counted in
 * drael_gateway_responses_store_failures_total{operation}, logged when the outage starts and ends.
 */
@Injectable()
export class ResponseStore implements OnApplicationShutdown {
  private readonly redis: Scripted;
  private readonly log = new Logger('responses-store');
  /** Since when Redis has failed every command (undefined: it answers). */
  private downSince?: number;

  constructor(@Inject(RESPONSES_CONFIG) private readonly config: ResponsesConfig) {
    // Every command ends within RESPONSES_REDIS_TIMEOUT_MS, answered or failed: the timeout runs
    // from the moment it is issued, so also while it waits in the offline queue. The queue is kept
    // (bounded so) only so that a command issued while the connection is being made or remade does
    // not fail for a connection milliseconds away; ioredis reconnects in the background.
    const redis = new Redis(config.REDIS_URL, {
      lazyConnect: true,
      enableOfflineQueue: true,
      maxRetriesPerRequest: 1,
      commandTimeout: config.RESPONSES_REDIS_TIMEOUT_MS,
    });
    redis.on('error', () => undefined); // reported per failed command by command(); never crash
    redis.defineCommand('storedReserve', { numberOfKeys: 3, lua: RESERVE });
    redis.defineCommand('storedUsage', { numberOfKeys: 2, lua: USAGE });
    redis.defineCommand('storedForget', { numberOfKeys: 3, lua: FORGET });
    this.redis = redis as Scripted;
  }

  private keyOf(accountId: string, id: string): string {
    return `${this.config.RESPONSES_KEY_PREFIX}${accountId}:${id}`;
  }

  /** The account's index and sizes (outside `<prefix><account>:*`, where only responses are). */
  private accountingOf(accountId: string): [string, string] {
    return [`${this.config.RESPONSES_KEY_PREFIX}~index:${accountId}`, `${this.config.RESPONSES_KEY_PREFIX}~sizes:${accountId}`];
  }

  /**
   * Before the model call: a response expected to take `bytes` (its history and its input; the
   * answer comes on top) fits one response's bound and what the account has left.
   */
  async admit(accountId: string, bytes: number): Promise<void> {
    this.assertFits(bytes);
    const used = await this.command('admit', (redis) => redis.storedUsage(...this.accountingOf(accountId), Date.now()));
    if (used + bytes > this.config.RESPONSES_ACCOUNT_MAX_BYTES) throw this.accountFull(used);
  }

  async save(accountId: string, stored: StoredResponse): Promise<void> {
    const text = JSON.stringify(stored);
    const bytes = Buffer.byteLength(text);
    this.assertFits(bytes);
    const ttlMs = this.config.RESPONSES_TTL_S * 1000;
    const now = Date.now();
    const [index, sizes] = this.accountingOf(accountId);
    const key = this.keyOf(accountId, stored.response.id);
    const max = this.config.RESPONSES_ACCOUNT_MAX_BYTES;
    const total = await this.command('save', (redis) => redis.storedReserve(index, sizes, key, now, stored.response.id, bytes, now + ttlMs, max, ttlMs, text));
    if (total < 0) throw this.accountFull(max);
  }

  async load(accountId: string, id: string): Promise<LoadedResponse | undefined> {
    const text = await this.command('load', (redis) => redis.get(this.keyOf(accountId, id)));
    return text ? { stored: JSON.parse(text) as StoredResponse, bytes: Buffer.byteLength(text) } : undefined;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const [index, sizes] = this.accountingOf(accountId);
    return (await this.command('delete', (redis) => redis.storedForget(index, sizes, this.keyOf(accountId, id), id))) === 1;
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }

  /**
   * The one way to Redis: any failure of the command (refused, timed out, the connection lost) is
   * the store unavailable, a retryable 503, whichever operation asked.
   */
  private async command<T>(operation: StoreOperation, run: (redis: Scripted) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await run(this.redis);
    } catch (err) {
      recordResponsesStoreFailure(operation);
      if (this.downSince === undefined) {
        this.downSince = Date.now();
        this.log.warn(`redis unreachable (${(err as Error).message}): stored responses answer 503 until it answers again`);
      }
      throw new ApiError(
        'service_unavailable',
        'Stored responses are unavailable right now (their store is not answering); retry shortly. A request with store: false does not need them.',
      );
    }
    if (this.downSince !== undefined) {
      this.log.warn(`redis answers again after ${Date.now() - this.downSince} ms: stored responses are served again`);
      this.downSince = undefined;
    }
    return result;
  }

  private assertFits(bytes: number): void {
    if (bytes <= this.config.RESPONSES_MAX_BYTES) return;
    throw new ApiError(
      'payload_too_large',
      `A stored response (its whole conversation, previous responses included) may take at most ${this.config.RESPONSES_MAX_BYTES} bytes; this one would take ${bytes}. Send store: false, or start a new conversation.`,
      'input',
    );
  }

  private accountFull(used: number): ApiError {
    return new ApiError(
      'quota_exceeded',
      `This account's stored responses take ${used} of their ${this.config.RESPONSES_ACCOUNT_MAX_BYTES} bytes. Delete some (DELETE /v1/responses/{id}), wait for them to expire, or send store: false.`,
      'store',
    );
  }
}
