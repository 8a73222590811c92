import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { GATEWAY_CONFIG, type GatewayConfig } from '../config/config.schema.js';
import { ApiError } from '../errors/api-error.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Admin routes need `Authorization: Bearer $DRAEL_ADMIN_TOKEN`; API keys do not open them. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.expected = config.DRAEL_ADMIN_TOKEN ? digest(config.DRAEL_ADMIN_TOKEN) : undefined;
  }

  canActivate(ctx: ExecutionContext): boolean {
    if (!this.expected) throw new ApiError('not_found', 'Unknown route.');
    const auth = ctx.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    if (!token) throw new ApiError('missing_api_key', 'The admin API needs "Authorization: Bearer <admin token>".');
    // Compared as fixed-length digests in constant time: the token's length and prefix leak nothing.
    if (!timingSafeEqual(digest(token), this.expected)) throw new ApiError('invalid_api_key', 'Incorrect admin token.');
    return true;
  }
}
