import { z } from 'zod';
import { baseEnvShape } from '@drael/config';

export const configSchema = z.object({
  ...baseEnvShape,
});
export type BillingConfig = z.infer<typeof configSchema>;
export const BILLING_CONFIG = Symbol('BILLING_CONFIG');
