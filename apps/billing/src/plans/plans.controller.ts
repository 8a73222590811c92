import { Controller } from '@nestjs/common';
import { billingCatalog, type ReplyOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { PlansService } from './plans.service.js';

@Controller()
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @Handles(billingCatalog.listPlans)
  list(): ReplyOf<typeof billingCatalog.listPlans> {
    return { plans: [...this.plans.list()], etag: this.plans.etag };
  }
}
