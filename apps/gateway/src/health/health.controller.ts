import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { ReadinessService } from './readiness.service.js';

@Controller()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process is up and serving HTTP. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /** Readiness: 503 in the OpenAI envelope, naming what is not answering, until everything is. */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply) {
    const r = await this.readiness.check();
    if (r.ready) return { status: 'ready', nats: r.nats, services: r.services, deployments: r.deployments };
    void reply.status(503);
    const error = new ApiError('service_unavailable', `Not ready: ${r.failing.join(', ')} not answering`);
    return { ...error.toEnvelope(), status: 'not_ready', failing: r.failing, nats: r.nats, services: r.services, deployments: r.deployments };
  }
}
