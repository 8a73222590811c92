import { z } from 'zod';
import { COMMON_ERROR_CODES } from './wire-error.js';
import { defineEntry, type ServiceName } from './rpc-entry.js';

export const HealthRequestSchema = z.object({}).strict();
export const HealthReplySchema = z.object({
  service: z.string(),
  status: z.literal('ok'),
  uptime_s: z.number().nonnegative(),
  version: z.string(),
  /** Each dependency the service checked (postgres, redis, docker, ...): `ok` or why it failed. */
  checks: z.record(z.string(), z.string()).optional(),
});
export type HealthReply = z.infer<typeof HealthReplySchema>;

/** `<service>.health.v1`: every service answers it; the gateway's /readyz asks them all. */
export function healthEntry<S extends ServiceName>(service: S) {
  return defineEntry({
    subject: `${service}.health.v1`,
    service,
    request: HealthRequestSchema,
    reply: HealthReplySchema,
    errors: COMMON_ERROR_CODES,
    timeoutMs: 1_000,
    idempotent: true,
  });
}
