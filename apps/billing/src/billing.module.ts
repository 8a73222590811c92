import { Module, type DynamicModule } from '@nestjs/common';
import { healthController, RpcClientModule } from '@drael/nats-rpc';
import { billingHealthChecks } from './health/health-checks.provider.js';
import { BILLING_CONFIG, type BillingConfig } from './config/config.schema.js';
import { Clock, SystemClock } from './clock/clock.js';
import { PrismaService } from './db/prisma.service.js';
import { PlansService } from './plans/plans.service.js';
import { PlansController } from './plans/plans.controller.js';
import { AccountRepository } from './accounts/account.repository.js';
import { AccountsService } from './accounts/accounts.service.js';
import { AccountsController } from './accounts/accounts.controller.js';
import { KeyRepository } from './keys/key.repository.js';
import { KeysService } from './keys/keys.service.js';
import { KeysController } from './keys/keys.controller.js';
import { HoldRepository } from './holds/hold.repository.js';
import { HoldsService } from './holds/holds.service.js';
import { HoldsController } from './holds/holds.controller.js';
import { HoldSweeper } from './holds/hold-sweeper.service.js';
import { UsageRepository } from './usage/usage.repository.js';
import { UsageService } from './usage/usage.service.js';
import { UsageController } from './usage/usage.controller.js';
import { receiptKeyringProvider } from './receipts/receipt-keyring.provider.js';
import { ReceiptsController } from './receipts/receipts.controller.js';
import { SpendRepository } from './spend/spend.repository.js';
import { SpendService } from './spend/spend.service.js';
import { SpendController } from './spend/spend.controller.js';
import { SpendSweeper } from './spend/spend-sweeper.service.js';

@Module({})
export class BillingModule {
  static forRoot(config: BillingConfig, options: { clock?: Clock } = {}): DynamicModule {
    return {
      module: BillingModule,
      // Revocations are announced to every gateway replica (gateway.keys.forget.v1).
      imports: [RpcClientModule.forRoot({ servers: config.NATS_URL, prefix: config.DRAEL_NATS_PREFIX, name: 'billing', security: config })],
      controllers: [healthController('billing'), PlansController, AccountsController, KeysController, HoldsController, UsageController, SpendController, ReceiptsController],
      providers: [
        { provide: BILLING_CONFIG, useValue: config },
        { provide: Clock, useValue: options.clock ?? new SystemClock() },
        PrismaService,
        billingHealthChecks,
        PlansService,
        AccountRepository,
        AccountsService,
        KeyRepository,
        KeysService,
        HoldRepository,
        HoldsService,
        HoldSweeper,
        UsageRepository,
        UsageService,
        receiptKeyringProvider,
        SpendRepository,
        SpendService,
        SpendSweeper,
      ],
      exports: [HoldsService, HoldSweeper, UsageService, AccountsService, KeysService, PrismaService],
    };
  }
}
