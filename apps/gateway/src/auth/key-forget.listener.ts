import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { gatewayCatalog } from '@drael/contracts';
import { NatsRpcClient, listenOnEveryReplica } from '@drael/nats-rpc';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { KeyVerifier } from './key-verifier.service.js';

/**
 * Hears billing's revocations (gateway.keys.forget.v1, delivered to every replica) and drops the
 * key from this replica's key cache, so a revoked key is refused by every gateway on its next
 * request rather than after AUTH_CACHE_TTL_MS. On the gateway's one NATS connection: the
 * subscription lives and ends with it. A replica cut off from NATS when the revocation was sent
 * misses it and falls back on the TTL.
 */
@Injectable()
export class KeyForgetListener implements OnModuleInit {
  private readonly logger = new Logger('auth');

  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    private readonly keys: KeyVerifier,
  ) {}

  async onModuleInit(): Promise<void> {
    listenOnEveryReplica(this.nats.connection, gatewayCatalog.forgetKey, this.config.DRAEL_NATS_PREFIX, {
      act: ({ key_id }) => ({ key_id, dropped: this.keys.forgetKey(key_id) }),
      onRefused: (subject, refused) => {
        if (refused <= 10 || refused % 1000 === 0) this.logger.warn(`refused a message without a reply subject on ${subject} (${refused} so far; not executed)`);
      },
      onError: (err) => this.logger.error(`key forget listener failed on a message: ${(err as Error).message}`),
    });
    // Subscribed at the server before the gateway takes its first request.
    await this.nats.connection.flush();
  }
}
