import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminToken } from '../auth/admin-token.js';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';
import { ReadinessService, type Readiness } from './readiness.service.js';
import { Public } from '../auth/route-access.js';

/** Probes of the orchestrator: no key (they name nothing of any account). */
@Controller()
@Public()
export class HealthController {
  private readonly admin: AdminToken;

  constructor(
    private readonly readiness: ReadinessService,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.admin = new AdminToken(config.DRAEL_ADMIN_TOKEN);
  }

  /** Liveness: the process is up and serving HTTP. */
  @Get('healthz')
  healthz() {
    return { status: 'ok' };
  }

  /**
   * Readiness: 200 while the gateway can serve (NATS and key verification), with the backends
   * that are down listed under `degraded`; 503 in the OpenAI envelope naming what stops it.
   * Anyone may ask (probes carry no credential), so the public answer says only what is up; the
   * operator's (`Authorization: Bearer $DRAEL_ADMIN_TOKEN`, as the console sends it) adds why a
   * part is down (its error, which may name internal hosts) and each model deployment's state and
   * traffic counters, which would otherwise let anyone watch the installation's use.
   */
  @Get('readyz')
  async readyz(@Req() req: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const checked = await this.readiness.check();
    const { ready, ...r } = this.admin.allows(req.headers) ? checked : publicPartOf(checked);
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

/** What /readyz tells anyone: the states, without the errors' words or the deployments' traffic. */
function publicPartOf(r: Readiness): Partial<Readiness> & Pick<Readiness, 'ready' | 'failing' | 'degraded'> {
  const { unavailable: _unavailable, deployments: _deployments, redis, ...states } = r;
  return { ...states, redis: redis === 'ok' ? 'ok' : 'unavailable' };
}
