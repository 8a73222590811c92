import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { UsageService } from './usage.service.js';

@Controller()
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Handles(billingCatalog.usage)
  get(req: ParsedRequestOf<typeof billingCatalog.usage>) {
    return this.usage.get(req.account_id);
  }

  @Handles(billingCatalog.usageDaily)
  async daily(req: ParsedRequestOf<typeof billingCatalog.usageDaily>) {
    return { account_id: req.account_id, days: await this.usage.daily(req.account_id, req.days) };
  }
}
