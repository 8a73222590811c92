import { Controller, Inject, Optional, type Type } from '@nestjs/common';
import { healthEntry, type HealthReply, type ServiceName } from '@drael/contracts';
import { Handles } from './handles.decorator.js';
import { HEALTH_CHECKS, runHealthChecks, type HealthCheck } from './health-checks.js';
import { RpcError } from './rpc-error.js';

const startedAt = Date.now();

/**
 * The `<service>.health.v1` handler every service mounts. It answers ok only while the service's
 * critical dependencies (its HEALTH_CHECKS) answer; otherwise a typed `unavailable` error naming
 * the failing ones, with every check's result in `details.checks`. The gateway then takes the
 * service's tools out of its catalogue.
 */
export function healthController(service: ServiceName, version = '0.1.0'): Type<unknown> {
  @Controller()
  class HealthController {
    constructor(@Optional() @Inject(HEALTH_CHECKS) private readonly checks?: HealthCheck[]) {}

    @Handles(healthEntry(service))
    async health(): Promise<HealthReply> {
      const r = await runHealthChecks(this.checks ?? []);
      if (!r.ok) {
        const why = r.failing.map((name) => `${name}: ${r.checks[name]}`).join('; ');
        throw new RpcError('unavailable', `${service} cannot serve: ${why}`, true, { failing: r.failing, checks: r.checks });
      }
      return { service, status: 'ok', uptime_s: (Date.now() - startedAt) / 1000, version, checks: r.checks };
    }
  }
  return HealthController;
}
