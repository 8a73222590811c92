import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { HoldsService } from './holds.service.js';

@Controller()
export class HoldsController {
  constructor(private readonly holds: HoldsService) {}

  @Handles(billingCatalog.hold)
  hold(req: ParsedRequestOf<typeof billingCatalog.hold>) {
    return this.holds.hold(req);
  }

  @Handles(billingCatalog.settle)
  settle(req: ParsedRequestOf<typeof billingCatalog.settle>) {
    return this.holds.settle(req);
  }

  @Handles(billingCatalog.release)
  release(req: ParsedRequestOf<typeof billingCatalog.release>) {
    return this.holds.release(req);
  }

  @Handles(billingCatalog.releaseByKey)
  releaseByKey(req: ParsedRequestOf<typeof billingCatalog.releaseByKey>) {
    return this.holds.releaseByKey(req);
  }
}
