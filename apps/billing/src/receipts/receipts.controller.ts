import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { SpendService } from '../spend/spend.service.js';

/** Billing's receipt keys and run ends: what verifiers check agent runs' receipt chains against. */
@Controller()
export class ReceiptsController {
  constructor(private readonly spend: SpendService) {}

  @Handles(billingCatalog.receiptKey)
  keys() {
    return this.spend.publishedKeys();
  }

  @Handles(billingCatalog.signRunEnd)
  signRunEnd(req: ParsedRequestOf<typeof billingCatalog.signRunEnd>) {
    return this.spend.signRunEnd(req);
  }
}
