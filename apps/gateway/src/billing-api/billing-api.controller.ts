import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { billingCatalog, type KeyIdentity } from '@drael/contracts';
import { NatsRpcClient } from '@drael/nats-rpc';
import { ApiError } from '../errors/api-error.js';
import { CallerIdentity } from '../auth/identity.js';
import { Public } from '../auth/route-access.js';
import { validateBody } from '../openai/validate.js';

export const DailyQuery = z.object({ days: z.coerce.number().int().min(1).max(90).default(30) });

@Controller('api/billing')
export class BillingApiController {
  constructor(@Inject(NatsRpcClient) private readonly nats: NatsRpcClient) {}

  /**
   * The plans and their weekly figures, public (spec 01: the figures are published here and live
   * in billing only). The ETag comes from billing and changes exactly when a figure does.
   */
  @Get('plans')
  @Public()
  async plans(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const { plans, etag } = await this.nats.request(billingCatalog.listPlans, {});
    void reply.header('etag', etag).header('cache-control', 'public, max-age=60');
    const ifNoneMatch = req.headers['if-none-match'];
    if (typeof ifNoneMatch === 'string' && ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
      void reply.status(304);
      return undefined;
    }
    return { object: 'list', data: plans };
  }

  /** The caller's own account only: the week's allowances, used, held, extra usage and the daily ceiling. */
  @Get('usage')
  async usage(@CallerIdentity() caller: KeyIdentity, @Query('account_id') accountId?: string) {
    // Another account's usage is "not found", never "not yours".
    if (accountId !== undefined && accountId !== caller.account_id) throw new ApiError('not_found', 'No such account.');
    return this.nats.request(billingCatalog.usage, { account_id: caller.account_id });
  }

  /** The caller's billed operations per UTC day over the last `days` (1-90, default 30): the console's chart. */
  @Get('usage/daily')
  async daily(@CallerIdentity() caller: KeyIdentity, @Query() query: unknown) {
    const { days } = validateBody(DailyQuery, query);
    const reply = await this.nats.request(billingCatalog.usageDaily, { account_id: caller.account_id, days });
    return { object: 'list', data: reply.days };
  }
}
