import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SpendService } from './spend.service.js';

@Controller()
export class SpendController {
  constructor(private readonly spend: SpendService) {}

  @Handles(billingCatalog.reserveSpend)
  reserve(req: ParsedRequestOf<typeof billingCatalog.reserveSpend>) {
    return this.spend.reserve(req);
  }

  @Handles(billingCatalog.settleSpend)
  settle(req: ParsedRequestOf<typeof billingCatalog.settleSpend>) {
    return this.spend.settle(req);
  }

  @Handles(billingCatalog.releaseSpend)
  release(req: ParsedRequestOf<typeof billingCatalog.releaseSpend>) {
    return this.spend.release(req);
  }

  @Handles(billingCatalog.creditWallet)
  credit(req: ParsedRequestOf<typeof billingCatalog.creditWallet>) {
    return this.spend.credit(req);
  }

  @Handles(billingCatalog.setAgentLimits)
  setLimits(req: ParsedRequestOf<typeof billingCatalog.setAgentLimits>) {
    return this.spend.setLimits(req);
  }

  @Handles(billingCatalog.wallet)
  wallet(req: ParsedRequestOf<typeof billingCatalog.wallet>) {
    return this.spend.wallet(req.account_id);
  }
}
