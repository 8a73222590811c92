import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { ReadinessService } from './readiness.service.js';
import { Public } from '../auth/route-access.js';

/** Probes of the orchestrator: no key (they name nothing of any account). */
@Controller()
@Public()
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  /** Liveness: the process is up and serving HTTP. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /**
   * Readiness: 200 while the gateway can serve (NATS and key verification), with the backends
   * that are down listed under `degraded`; 503 in the OpenAI envelope naming what stops it.
   */
  @Get('readyz')
  async readyz(@Res({ passthrough: true }) reply: FastifyReply) {
    const { ready, ...r } = await this.readiness.check();
    if (ready) return { status: r.degraded.length > 0 ? 'degraded' : 'ready', ...r };
    void reply.status(503);
    const error = new ApiError(
      'service_unavailable',
      r.failing.includes('draining') ? 'Not ready: the gateway is shutting down' : `Not ready: ${notAnswering(r.failing)} not answering`,
    );
    return { ...error.toEnvelope(), status: 'not_ready', ...r };
  }
}

function notAnswering(failing: string[]): string {
  return failing.map((f) => (f === 'billing' ? 'key verification (billing)' : f)).join(', ');
}
