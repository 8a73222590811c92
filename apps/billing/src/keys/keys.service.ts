import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { gatewayCatalog, type KeyIdentity, type ParsedRequestOf, type ReplyOf, type billingCatalog } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { billingError, isUuid } from '../billing-error.js';
import { Clock } from '../clock/clock.js';
import { BILLING_CONFIG, type BillingConfig } from '../config/config.schema.js';
import { AccountsService } from '../accounts/accounts.service.js';
import { generateApiKey, hashApiKey, keyHint, looksLikeApiKey } from './api-key.js';
import { KeyRepository } from './key.repository.js';

@Injectable()
export class KeysService {
  constructor(
    private readonly keys: KeyRepository,
    private readonly accounts: AccountsService,
    private readonly clock: Clock,
    @Inject(BILLING_CONFIG) private readonly config: BillingConfig,
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
  ) {}

  async create(req: ParsedRequestOf<typeof billingCatalog.createKey>): Promise<ReplyOf<typeof billingCatalog.createKey>> {
    const expiresAt = req.expires_at === undefined ? null : new Date(req.expires_at);
    if (expiresAt && expiresAt.getTime() <= this.clock.now().getTime()) {
      throw billingError('bad_request', 'expires_at: must be in the future', { param: 'expires_at' });
    }
    const account = await this.accounts.get(req.account_id);
    const apiKey = generateApiKey();
    const id = randomUUID();
    await this.keys.create({
      id,
      accountId: account.id,
      name: req.name,
      hash: hashApiKey(apiKey),
      hint: keyHint(apiKey),
      toolLevel: req.tool_level,
      perMinute: req.rate_limit?.per_minute ?? this.config.BILLING_DEFAULT_PER_MINUTE,
      perHour: req.rate_limit?.per_hour ?? this.config.BILLING_DEFAULT_PER_HOUR,
      expiresAt,
    });
    // The only time the key leaves billing.
    return { key_id: id, api_key: apiKey, account_id: account.id, tool_level: req.tool_level, expires_at: expiresAt?.toISOString() ?? null };
  }

  async verify(apiKey: string): Promise<KeyIdentity> {
    const key = looksLikeApiKey(apiKey) ? await this.keys.findByHash(hashApiKey(apiKey)) : null;
    // One answer for unknown, revoked and expired keys: the caller learns nothing about which.
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= this.clock.now().getTime())) {
      throw billingError('invalid_api_key', 'Incorrect API key provided.');
    }
    return {
      account_id: key.accountId,
      key_id: key.id,
      tool_level: key.toolLevel,
      rate_limit: { per_minute: key.perMinute, per_hour: key.perHour },
      plan: key.plan,
      expires_at: key.expiresAt?.toISOString() ?? null,
    };
  }

  async revoke(req: ParsedRequestOf<typeof billingCatalog.revokeKey>): Promise<ReplyOf<typeof billingCatalog.revokeKey>> {
    const outcome = isUuid(req.account_id) && isUuid(req.key_id) ? await this.keys.revoke(req.account_id, req.key_id, this.clock.now()) : 'missing';
    // A key of another account is "not found", never "not yours".
    if (outcome === 'missing') throw billingError('key_not_found', 'no such key for this account');
    // Announced again for a key revoked already: an earlier announcement may have been missed.
    await this.announceRevocation(req.key_id);
    return { key_id: req.key_id, revoked: true };
  }

  /**
   * Tells every gateway replica to drop the key from its key cache (gateway.keys.forget.v1), so it
   * is refused everywhere from its next request on rather than once the cache entry expires. The
   * revocation is committed already and stands whatever happens here: the first gateway's answer
   * is awaited for at most the subject's timeout, and no gateway running (NATS: no responders), a
   * slow one, or NATS down leaves the key refused by the gateways within AUTH_CACHE_TTL_MS.
   */
  private async announceRevocation(keyId: string): Promise<void> {
    await this.nats.request(gatewayCatalog.forgetKey, { key_id: keyId }).catch(() => undefined);
  }

  async list(req: ParsedRequestOf<typeof billingCatalog.listKeys>): Promise<ReplyOf<typeof billingCatalog.listKeys>> {
    const account = await this.accounts.get(req.account_id);
    const rows = await this.keys.listOf(account.id);
    return {
      keys: rows.map((k) => ({
        key_id: k.id,
        name: k.name,
        hint: k.hint,
        tool_level: k.toolLevel,
        rate_limit: { per_minute: k.perMinute, per_hour: k.perHour },
        created_at: k.createdAt.toISOString(),
        revoked_at: k.revokedAt?.toISOString() ?? null,
        expires_at: k.expiresAt?.toISOString() ?? null,
      })),
    };
  }
}
