import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { AccountsService } from './accounts.service.js';

@Controller()
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  @Handles(billingCatalog.createAccount)
  create(req: ParsedRequestOf<typeof billingCatalog.createAccount>) {
    return this.accounts.create(req);
  }

  @Handles(billingCatalog.setExtraUsage)
  setExtraUsage(req: ParsedRequestOf<typeof billingCatalog.setExtraUsage>) {
    return this.accounts.setExtraUsage(req);
  }

  @Handles(billingCatalog.listAccounts)
  list(req: ParsedRequestOf<typeof billingCatalog.listAccounts>) {
    return this.accounts.list(req);
  }
}
