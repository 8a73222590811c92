import { FairSlots, tenantShareOf as shareOf, type FairSlotLimits, type Refusal } from '@drael/fair-slots';
import { SandboxError } from '../sandbox-error.js';

/**
 * The slots' bounds from the configuration (SANDBOX_MAX_CONCURRENT, SANDBOX_MAX_QUEUE and a
 * tenant's share of each). A tenant's share, unless configured: half the slots and a quarter of
 * the queue, at least 1 each (packages/fair-slots, the one definition of the rule).
 */
export function tenantShareOf(config: {
  SANDBOX_MAX_CONCURRENT: number;
  SANDBOX_MAX_QUEUE: number;
  SANDBOX_MAX_CONCURRENT_PER_TENANT?: number | undefined;
  SANDBOX_MAX_QUEUE_PER_TENANT?: number | undefined;
}): FairSlotLimits {
  return shareOf({
    max: config.SANDBOX_MAX_CONCURRENT,
    queueMax: config.SANDBOX_MAX_QUEUE,
    maxPerTenant: config.SANDBOX_MAX_CONCURRENT_PER_TENANT,
    queueMaxPerTenant: config.SANDBOX_MAX_QUEUE_PER_TENANT,
  });
}

/**
 * The run slots of one replica, shared fairly between tenants (issue F8: one chat request of one
 * tenant, up to 128 parallel run_code calls, took every slot and the whole queue, and every other
 * tenant was refused or timed out for minutes). The rule (shares, round-robin, deadline, cancel)
 * is packages/fair-slots; a run refused by it gets the retryable `sandbox_busy`, whose
 * `details.share` says which bound refused it.
 */
export class RunSlots extends FairSlots {
  constructor(limits: FairSlotLimits) {
    super(limits, runRefusal);
  }
}

function runRefusal(refusal: Refusal): SandboxError {
  switch (refusal.share) {
    case 'tenant':
      return busy(
        `this tenant's share of the sandbox is taken (${refusal.running} of its ${refusal.maxPerTenant} runs at once, ${refusal.queued} of its ${refusal.queueMaxPerTenant} waiting); retry shortly`,
        { share: 'tenant', running: refusal.running, queued: refusal.queued },
      );
    case 'replica':
      return busy(`the sandbox is at capacity (${refusal.running} running, ${refusal.queued} queued); retry shortly`, {
        share: 'replica',
        running: refusal.running,
        queued: refusal.queued,
      });
    case 'deadline':
      return busy('no run slot came free while the caller still waited for the whole run; it was not started; retry shortly', { share: 'deadline' });
  }
}

function busy(message: string, details: Record<string, unknown>): SandboxError {
  return new SandboxError('sandbox_busy', message, true, details);
}
