import { Module } from '@nestjs/common';
import { BillingApiController } from './billing-api.controller.js';

/** GET /api/billing/plans (public, ETag) and GET /api/billing/usage (the caller's account). */
@Module({ controllers: [BillingApiController] })
export class BillingApiModule {}
