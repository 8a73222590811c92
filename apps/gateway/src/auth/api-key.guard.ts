import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest, FastifyReply } from 'fastify';
import { KeyGate } from './key-gate.service.js';
import { needsApiKey } from './public-routes.js';

/**
 * The global guard in front of every /v1 and /api Nest route (public-routes.ts lists the
 * exceptions): KeyGate admits the request and the caller's identity goes on the request.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly gate: KeyGate) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    if (ctx.getType() !== 'http') return true; // NATS handlers of the hybrid app carry no API key
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (!needsApiKey(req.method, req.url)) return true;
    req.identity = await this.gate.admit(req.headers, ctx.switchToHttp().getResponse<FastifyReply>().raw);
    return true;
  }
}
