import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.js';
import { recordResponsesStoreFailure, recordResponsesStoreRefusal, type StoreOperation, type StoreScope } from '../metrics/gateway.metrics.js';
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

// Stored bytes are counted twice, with one rule: per account and for the whole installation
// (every gateway replica shares the count, in Redis). Each count is a sorted set of entries by
// expiry (ms) and a hash of each entry's size with the running total: an account's entries are its
// response ids, the installation's are the responses' keys. Expired entries leave a total when it
// is next read, so it never counts a response Redis has already let go and cannot drift up past
// one TTL; a delete takes its bytes off both at once. Scripts, so that two replicas saving at
// once cannot both pass a bound. A response and its accounting are written (RESERVE) and removed
// (FORGET) in one script each: a Redis lost between two commands can leave neither a response
// nobody counts nor bytes counted for a response that is not there.
//
// KEYS: 1 account index, 2 account sizes, 3 the response's key, 4 installation index, 5
// installation sizes. The installation's expired entries are pruned at most PRUNE_BATCH a call
// (a script blocks Redis while it runs): a total not yet pruned is too high, never too low.
const PRUNE = `
local function prune(index, sizes, now, batch)
  local expired
  if batch then
    expired = redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, batch)
  else
    expired = redis.call('ZRANGEBYSCORE', index, '-inf', now)
  end
  local freed = 0
  for _, member in ipairs(expired) do
    freed = freed + tonumber(redis.call('HGET', sizes, member) or '0')
    redis.call('HDEL', sizes, member)
  end
  if #expired > 0 then redis.call('ZREM', index, unpack(expired)) end
  local total = math.max(0, tonumber(redis.call('HGET', sizes, '#total') or '0') - freed)
  redis.call('HSET', sizes, '#total', total)
  return total
end
local now = tonumber(ARGV[1])
local total = prune(KEYS[1], KEYS[2], now, nil)
local all = prune(KEYS[4], KEYS[5], now, 500)
`;
// Returns the account's new total, or -1 (the account's bound) / -2 (the installation's) with nothing written.
const RESERVE = `${PRUNE}
local id, bytes, expiry, max, ttl, allMax = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8])
local before = tonumber(redis.call('HGET', KEYS[2], id) or '0')
local allBefore = tonumber(redis.call('HGET', KEYS[5], KEYS[3]) or '0')
if total - before + bytes > max then return -1 end
if all - allBefore + bytes > allMax then return -2 end
redis.call('ZADD', KEYS[1], expiry, id)
redis.call('HSET', KEYS[2], id, bytes)
redis.call('HSET', KEYS[2], '#total', total - before + bytes)
redis.call('ZADD', KEYS[4], expiry, KEYS[3])
redis.call('HSET', KEYS[5], KEYS[3], bytes)
redis.call('HSET', KEYS[5], '#total', all - allBefore + bytes)
for i = 1, 5 do
  if i ~= 3 then redis.call('PEXPIRE', KEYS[i], ttl) end
end
redis.call('SET', KEYS[3], ARGV[7], 'PX', ttl)
return total - before + bytes
`;
const USAGE = `${PRUNE}
return { total, all }
`;
const FORGET = `
local function forget(index, sizes, member)
  local bytes = tonumber(redis.call('HGET', sizes, member) or '0')
  if bytes > 0 then
    redis.call('HDEL', sizes, member)
    redis.call('HSET', sizes, '#total', math.max(0, tonumber(redis.call('HGET', sizes, '#total') or '0') - bytes))
  end
  redis.call('ZREM', index, member)
end
local deleted = redis.call('DEL', KEYS[3])
forget(KEYS[1], KEYS[2], ARGV[1])
forget(KEYS[4], KEYS[5], KEYS[3])
return deleted
`;

type AccountingKeys = [index: string, sizes: string, key: string, allIndex: string, allSizes: string];

type Scripted = Redis & {
  storedReserve(...args: [...AccountingKeys, now: number, id: string, bytes: number, expiry: number, max: number, ttlMs: number, text: string, totalMax: number]): Promise<number>;
  storedUsage(...args: [...AccountingKeys, now: number]): Promise<[number, number]>;
  storedForget(...args: [...AccountingKeys, id: string]): Promise<number>;
};

/**
 * Stored responses in Redis, one key per response under the account's prefix, so a key of one
 * account can never read, continue or delete another account's responses. Each expires after the
 * configured TTL. Bounded, since this Redis also holds the rate limits, the router's state and
 * agent-run's queue: one stored response (its whole conversation: a continuation carries its
 * history) at most RESPONSES_MAX_BYTES (413 `payload_too_large`), one account's at most
 * RESPONSES_ACCOUNT_MAX_BYTES together and every account's at most RESPONSES_TOTAL_MAX_BYTES
 * together (429 `quota_exceeded` for either: one rule over two scopes), all checked before the
 * model is called (`admit`) and the two totals again, atomically, when the response is saved.
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
    redis.defineCommand('storedReserve', { numberOfKeys: 5, lua: RESERVE });
    redis.defineCommand('storedUsage', { numberOfKeys: 5, lua: USAGE });
    redis.defineCommand('storedForget', { numberOfKeys: 5, lua: FORGET });
    this.redis = redis as Scripted;
  }

  private keyOf(accountId: string, id: string): string {
    return `${this.config.RESPONSES_KEY_PREFIX}${accountId}:${id}`;
  }

  /**
   * The keys RESERVE, USAGE and FORGET take: the account's index and sizes, the response's key, the
   * installation's index and sizes (all outside `<prefix><account>:*`, where only responses are;
   * `~all:` cannot be an account's `~index:` or `~sizes:`).
   */
  private accountingOf(accountId: string, id = ''): AccountingKeys {
    const p = this.config.RESPONSES_KEY_PREFIX;
    return [`${p}~index:${accountId}`, `${p}~sizes:${accountId}`, this.keyOf(accountId, id), `${p}~all:index`, `${p}~all:sizes`];
  }

  /**
   * Before the model call: a response expected to take `bytes` (its history and its input; the
   * answer comes on top) fits one response's bound and what the account and the installation have left.
   */
  async admit(accountId: string, bytes: number): Promise<void> {
    this.assertFits(bytes);
    const [used, all] = await this.command('admit', (redis) => redis.storedUsage(...this.accountingOf(accountId), Date.now()));
    if (used + bytes > this.config.RESPONSES_ACCOUNT_MAX_BYTES) throw this.full('account', used);
    if (all + bytes > this.config.RESPONSES_TOTAL_MAX_BYTES) throw this.full('installation', all);
  }

  async save(accountId: string, stored: StoredResponse): Promise<void> {
    const text = JSON.stringify(stored);
    const bytes = Buffer.byteLength(text);
    this.assertFits(bytes);
    const ttlMs = this.config.RESPONSES_TTL_S * 1000;
    const now = Date.now();
    const { RESPONSES_ACCOUNT_MAX_BYTES: max, RESPONSES_TOTAL_MAX_BYTES: totalMax } = this.config;
    const id = stored.response.id;
    const total = await this.command('save', (redis) => redis.storedReserve(...this.accountingOf(accountId, id), now, id, bytes, now + ttlMs, max, ttlMs, text, totalMax));
    if (total === -1) throw this.full('account', max);
    if (total === -2) throw this.full('installation', totalMax);
  }

  async load(accountId: string, id: string): Promise<LoadedResponse | undefined> {
    const text = await this.command('load', (redis) => redis.get(this.keyOf(accountId, id)));
    return text ? { stored: JSON.parse(text) as StoredResponse, bytes: Buffer.byteLength(text) } : undefined;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.command('delete', (redis) => redis.storedForget(...this.accountingOf(accountId, id), id))) === 1;
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

  /**
   * The one refusal of a response past a bound on stored bytes, the account's or the
   * installation's: 429 `quota_exceeded` on `store`, nothing stored. The installation's message
   * gives no figures: they would tell a client how much every other account stores.
   */
  private full(scope: StoreScope, used: number): ApiError {
    recordResponsesStoreRefusal(scope);
    const message =
      scope === 'account'
        ? `This account's stored responses take ${used} of their ${this.config.RESPONSES_ACCOUNT_MAX_BYTES} bytes. Delete some (DELETE /v1/responses/{id}), wait for them to expire, or send store: false.`
        : 'This installation has no room left for stored responses right now (its bound over every account). Send store: false, or retry once older responses have expired or been deleted.';
    return new ApiError('quota_exceeded', message, 'store');
  }
}
