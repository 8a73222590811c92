import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Put, Query, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { billingCatalog, ToolLevelSchema } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { validateBody as validate } from '../openai/validate.js';
import { AdminTokenGuard } from './admin-token.guard.js';

const CreateAccountBody = z.object({
  name: z.string().min(1).max(200),
  plan: z.string().default('free'),
  extra_usage: z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() }).optional(),
});
const CreateKeyBody = z.object({
  name: z.string().max(200).optional(),
  tool_level: ToolLevelSchema.default('l3_shell'),
  rate_limit: z.object({ per_minute: z.number().int().positive(), per_hour: z.number().int().positive() }).optional(),
});
const ListAccountsQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50), before: z.string().max(64).optional() });
const ExtraUsageBody = z.object({ enabled: z.boolean(), daily_ceiling: z.number().int().nonnegative() });
// Agent steps' money (spec 03), in integer micro-dollars like billing's own subjects.
const WalletCreditBody = billingCatalog.creditWallet.request.omit({ account_id: true });
const AgentLimitsBody = billingCatalog.setAgentLimits.request.omit({ account_id: true });

/**
 * The operator's API (behind the admin token): accounts, keys, extra usage, usage, and the wallet
 * agent steps are billed to (balance top-ups, monthly budget, step rate). Thin: each route
 * is one billing subject over NATS. The same operations exist in billing's CLI.
 */
@Controller('admin')
@UseGuards(AdminTokenGuard)
export class AdminController {
  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

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

  @Post('accounts/:account/keys')
  @HttpCode(201)
  createKey(@Param('account') account: string, @Body() body: unknown) {
    return this.nats.request(billingCatalog.createKey, { account_id: account, ...validate(CreateKeyBody, body ?? {}) });
  }

  @Delete('accounts/:account/keys/:key')
  revokeKey(@Param('account') account: string, @Param('key') key: string) {
    return this.nats.request(billingCatalog.revokeKey, { account_id: account, key_id: key });
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

  @Post('accounts/:account/wallet/credit')
  @HttpCode(200)
  creditWallet(@Param('account') account: string, @Body() body: unknown, @Headers('idempotency-key') idempotencyKey?: string) {
    // The Idempotency-Key header (or the body's idempotency_key): a retried credit adds once.
    const key = idempotencyKey?.trim() || undefined;
    const credit = validate(WalletCreditBody, key ? { idempotency_key: key, ...(body as object) } : body);
    return this.nats.request(billingCatalog.creditWallet, { account_id: account, ...credit });
  }

  @Put('accounts/:account/wallet/limits')
  setAgentLimits(@Param('account') account: string, @Body() body: unknown) {
    return this.nats.request(billingCatalog.setAgentLimits, { account_id: account, ...validate(AgentLimitsBody, body) });
  }
}
