import { Controller } from '@nestjs/common';
import { billingCatalog, type ParsedRequestOf } from '@drael/contracts';
import { Handles } from '@drael/nats-rpc';
import { KeysService } from './keys.service.js';

@Controller()
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Handles(billingCatalog.createKey)
  create(req: ParsedRequestOf<typeof billingCatalog.createKey>) {
    return this.keys.create(req);
  }

  @Handles(billingCatalog.verifyKey)
  verify(req: ParsedRequestOf<typeof billingCatalog.verifyKey>) {
    return this.keys.verify(req.api_key);
  }

  @Handles(billingCatalog.revokeKey)
  revoke(req: ParsedRequestOf<typeof billingCatalog.revokeKey>) {
    return this.keys.revoke(req);
  }

  @Handles(billingCatalog.listKeys)
  list(req: ParsedRequestOf<typeof billingCatalog.listKeys>) {
    return this.keys.list(req);
  }
}
