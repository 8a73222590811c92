import { Controller, type Type } from '@nestjs/common';
import { healthEntry, type HealthReply, type ServiceName } from '@drael/contracts';
import { Handles } from './handles.decorator.js';

const startedAt = Date.now();

/** The `<service>.health.v1` handler every service mounts: it answers while the process can take work. */
export function healthController(service: ServiceName, version = '0.1.0'): Type<unknown> {
  @Controller()
  class HealthController {
    @Handles(healthEntry(service))
    health(): HealthReply {
      return { service, status: 'ok', uptime_s: (Date.now() - startedAt) / 1000, version };
    }
  }
  return HealthController;
}
