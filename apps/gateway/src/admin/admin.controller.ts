import { Body, Controller, Delete, Get, Header, Headers, HttpCode, Inject, Param, Post, Put, Query } from '@nestjs/common';
import { z } from 'zod';
import { billingCatalog, OperatorKeyRateLimitSchema } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { idempotencyKeyOf } from '../http/idempotency-key.js';
import { validateBody as validate } from '../openai/validate.js';
import { AdminOnly } from '../auth/route-access.js';
import { KeyVerifier } from '../auth/key-verifier.service.js';

// The bodies are billing's own request schemas (one definition: names free of NUL, numbers within
// what billing's columns hold), less what the path gives; a violation is a 400 naming the param.
export const CreateAccountBody = billingCatalog.createAccount.request;
// The operator's rate limit: per_hour left out is 60 x per_minute, smaller is a 400 naming it (the CLI's rule, in contracts).
export const CreateKeyBody = billingCatalog.createKey.request.omit({ account_id: true }).extend({ rate_limit: OperatorKeyRateLimitSchema.optional() });
export const ExtraUsageBody = billingCatalog.setExtraUsage.request.omit({ account_id: true });
export const ListAccountsQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), before: z.string().max(64).optional() });
// Agent steps' money (spec 03), in integer micro-dollars like billing's own subjects.
export const WalletCreditBody = billingCatalog.creditWallet.request.omit({ account_id: true, idempotency_key: true });
export const AgentLimitsBody = billingCatalog.setAgentLimits.request.omit({ account_id: true });

/**
 * The operator's API (behind the admin token): accounts, keys, extra usage, usage, and the wallet
 * agent steps are billed to (balance top-ups, monthly budget, step rate). Thin: each route
 * is one billing subject over NATS. The same operations exist in billing's CLI.
 */
@Controller('admin')
@AdminOnly()
export class AdminController {
  constructor(
    @Inject(NatsRpcClient) private readonly nats: NatsRpcClient,
    private readonly keys: KeyVerifier,
  ) {}

  @Post('accounts')
  @HttpCode(201)
  createAccount(@Body() body: unknown) {
    return this.nats.request(billingCatalog.createAccount, validate(CreateAccountBody, body));
  }

  /** Newest first; `before` = the last account_id of the previous page. */
  @Get('accounts')
  listAccounts(@Query() query: unknown) {
    return this.nats.request(billingCatalog.listAccounts, validate(ListAccountsQuery, query));
  }

  /** The account's keys (hint, level, limits, revoked or not); never a key itself. */
  @Get('accounts/:account/keys')
  listKeys(@Param('account') account: string) {
    return this.nats.request(billingCatalog.listKeys, { account_id: account });
  }

  /** The one answer that shows the key itself: kept by no cache, shared or the browser's. */
  @Post('accounts/:account/keys')
  @HttpCode(201)
  @Header('cache-control', 'no-store')
  createKey(@Param('account') account: string, @Body() body: unknown) {
    return this.nats.request(billingCatalog.createKey, { account_id: account, ...validate(CreateKeyBody, body ?? {}) });
  }

  /** Revoked in billing, then dropped from this gateway's key cache: refused here from the next request on. */
  @Delete('accounts/:account/keys/:key')
  async revokeKey(@Param('account') account: string, @Param('key') key: string) {
    const revoked = await this.nats.request(billingCatalog.revokeKey, { account_id: account, key_id: key });
    this.keys.forgetKey(key);
    return revoked;
  }

  @Put('accounts/:account/extra-usage')
  setExtraUsage(@Param('account') account: string, @Body() body: unknown) {
    return this.nats.request(billingCatalog.setExtraUsage, { account_id: account, ...validate(ExtraUsageBody, body) });
  }

  @Get('accounts/:account/usage')
  usage(@Param('account') account: string) {
    return this.nats.request(billingCatalog.usage, { account_id: account });
  }

  @Get('accounts/:account/wallet')
  wallet(@Param('account') account: string) {
    return this.nats.request(billingCatalog.wallet, { account_id: account });
  }

  /** A top-up. With an `Idempotency-Key`, a repeat of the same credit adds nothing and answers as the first did; another amount is 409. */
  @Post('accounts/:account/wallet/credit')
  @HttpCode(200)
  creditWallet(@Param('account') account: string, @Body() body: unknown, @Headers('idempotency-key') idempotencyKey?: string) {
    const idempotency_key = idempotencyKeyOf(idempotencyKey);
    return this.nats.request(billingCatalog.creditWallet, { account_id: account, ...validate(WalletCreditBody, body), ...(idempotency_key ? { idempotency_key } : {}) });
  }

  @Put('accounts/:account/wallet/limits')
  setAgentLimits(@Param('account') account: string, @Body() body: unknown) {
    return this.nats.request(billingCatalog.setAgentLimits, { account_id: account, ...validate(AgentLimitsBody, body) });
  }
}
