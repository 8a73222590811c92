import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
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

/**
 * Stored responses in Redis, one key per response under the account's prefix, so a key of one
 * account can never read, continue or delete another account's responses. Each expires after the
 * configured TTL.
 */
@Injectable()
export class ResponseStore implements OnApplicationShutdown {
  private readonly redis: Redis;

  constructor(@Inject(RESPONSES_CONFIG) private readonly config: ResponsesConfig) {
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  }

  private keyOf(accountId: string, id: string): string {
    return `${this.config.RESPONSES_KEY_PREFIX}${accountId}:${id}`;
  }

  async save(accountId: string, stored: StoredResponse): Promise<void> {
    await this.redis.set(this.keyOf(accountId, stored.response.id), JSON.stringify(stored), 'EX', this.config.RESPONSES_TTL_S);
  }

  async load(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const text = await this.redis.get(this.keyOf(accountId, id));
    return text ? (JSON.parse(text) as StoredResponse) : undefined;
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    return (await this.redis.del(this.keyOf(accountId, id))) === 1;
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
